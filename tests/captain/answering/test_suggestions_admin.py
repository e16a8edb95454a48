"""The assistant's follow-up suggestion settings on its admin page: shown, saved on add and on change."""

from __future__ import annotations

import pytest
from django.test import Client

from captain.assistants.models import Assistant
from helpdesk.models import Membership
from tests.captain.test_admin import ADD_URL, change_url, new_assistant_data
from tests.factories import AccountFactory, AssistantFactory, MembershipFactory, UserFactory
from tests.helpdesk.test_admin import admin_form_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def account_a():
    return AccountFactory(name="Alpha Co")


@pytest.fixture
def client_a(account_a):
    client = Client()
    client.force_login(staff_user_of(account_a))
    return client


def staff_user_of(account):
    user = UserFactory(is_staff=True)
    user.save()  # UserFactory skips the post-generation save: without it the session's password hash is stale
    MembershipFactory(account=account, user=user, role=Membership.Role.ADMIN)
    return user


def test_the_assistant_page_shows_both_suggestion_settings(client_a, account_a):
    html = client_a.get(change_url(AssistantFactory(account=account_a))).content.decode()
    assert 'name="suggestions_enabled"' in html
    assert 'name="suggestions_persona"' in html


def test_a_new_assistant_keeps_its_suggestion_settings(client_a, account_a):
    # The page's own management forms first, so inlines added to the page later do not break this test.
    data = (
        admin_form_data(client_a.get(ADD_URL))
        | new_assistant_data(account_a)
        | {
            "suggestions_enabled": "on",
            "suggestions_persona": "Questions a new customer asks next.",
        }
    )
    response = client_a.post(ADD_URL, data)
    assert response.status_code == 302
    assistant = Assistant.objects.get(account=account_a)
    assert assistant.suggestions_enabled is True
    assert assistant.suggestions_persona == "Questions a new customer asks next."


def test_changing_the_suggestion_settings_saves_them(client_a, account_a):
    assistant = AssistantFactory(account=account_a, suggestions_enabled=True, suggestions_persona="old")
    data = admin_form_data(client_a.get(change_url(assistant)))
    data.pop("suggestions_enabled")  # unticked
    data["suggestions_persona"] = "Short practical questions."
    response = client_a.post(change_url(assistant), data)
    assert response.status_code == 302
    assistant.refresh_from_db()
    assert (assistant.suggestions_enabled, assistant.suggestions_persona) == (
        False,
        "Short practical questions.",
    )
