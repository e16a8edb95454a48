"""The inbox admin's members inline: only people of the inbox's account, whoever edits; shown on a saved inbox."""

from __future__ import annotations

import pytest
from django.test import Client

from helpdesk.models import InboxMember, Membership
from tests.factories import AccountFactory, InboxFactory, MembershipFactory, UserFactory
from tests.helpdesk.test_admin import admin_form_data

pytestmark = pytest.mark.django_db


def staff(**kwargs):
    user = UserFactory(is_staff=True, **kwargs)
    user.save()  # UserFactory skips the post-generation save: without it the session's password hash is stale
    return user


def with_rows(data: dict, users) -> dict:
    data = dict(data) | {"inbox_members-TOTAL_FORMS": str(len(users)), "inbox_members-INITIAL_FORMS": "0"}
    for i, user in enumerate(users):
        data[f"inbox_members-{i}-user"] = str(user.pk)
    return data


def test_inbox_members_must_be_people_of_the_inboxs_account():
    alpha, bravo = AccountFactory(name="Alpha Co"), AccountFactory(name="Bravo Co")
    inbox = InboxFactory(account=alpha)
    ours, theirs = UserFactory(username="ours"), UserFactory(username="theirs")
    MembershipFactory(account=alpha, user=ours)
    MembershipFactory(account=bravo, user=theirs)
    # A superuser sees every user, so only the row check stands between an inbox and another account's people.
    client = Client()
    client.force_login(staff(is_superuser=True))
    url = f"/admin/helpdesk/inbox/{inbox.pk}/change/"
    page = client.get(url)
    assert "inbox_members-TOTAL_FORMS" in page.content.decode()

    refused = client.post(url, with_rows(admin_form_data(page), [theirs]))
    assert refused.status_code == 200
    errors = [form.errors for form in refused.context["inline_admin_formsets"][0].formset.forms]
    assert "theirs is not a member of Alpha Co." in str(errors)
    assert not InboxMember.objects.exists()

    saved = client.post(url, with_rows(admin_form_data(page), [ours]))
    assert saved.status_code == 302
    assert list(inbox.members.all()) == [ours]


def test_an_account_admin_chooses_among_its_own_people_only():
    alpha, bravo = AccountFactory(name="Alpha Co"), AccountFactory(name="Bravo Co")
    inbox = InboxFactory(account=alpha)
    admin = staff(username="boss")
    MembershipFactory(account=alpha, user=admin, role=Membership.Role.ADMIN)
    MembershipFactory(account=bravo, user=UserFactory(username="stranger"))
    client = Client()
    client.force_login(admin)
    page = client.get(f"/admin/helpdesk/inbox/{inbox.pk}/change/")
    choices = page.context["inline_admin_formsets"][0].formset.empty_form.fields["user"].queryset
    assert [u.username for u in choices] == ["boss"]
    # A new inbox has no account yet: members are chosen once it is saved.
    assert "inbox_members-TOTAL_FORMS" not in client.get("/admin/helpdesk/inbox/add/").content.decode()
