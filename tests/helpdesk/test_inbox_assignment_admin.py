"""The inbox admin's "Members and assignment" section: the auto-assign switch is saved with the members, and the
page says what members mean for visibility (an inbox with no members is open to every agent)."""

from __future__ import annotations

import pytest
from django.test import Client

from helpdesk.models import Inbox
from tests.factories import AccountFactory, InboxFactory, MembershipFactory, UserFactory
from tests.helpdesk.test_admin import admin_form_data
from tests.helpdesk.test_admin_inbox_members import staff, with_rows

pytestmark = pytest.mark.django_db


def test_the_auto_assign_switch_is_saved_and_explained():
    account = AccountFactory(name="Alpha Co")
    inbox = InboxFactory(account=account)
    agent = UserFactory(username="ann")
    MembershipFactory(account=account, user=agent)
    client = Client()
    client.force_login(staff(is_superuser=True))
    url = f"/admin/helpdesk/inbox/{inbox.pk}/change/"
    page = client.get(url)
    text = page.content.decode()
    assert "Members and assignment" in text
    assert "An inbox with no members is open to every agent of the account." in text

    saved = client.post(url, with_rows(admin_form_data(page), [agent]) | {"auto_assign": "on"})

    assert saved.status_code == 302
    inbox = Inbox.objects.get(pk=inbox.pk)
    assert inbox.auto_assign
    assert list(inbox.members.all()) == [agent]
