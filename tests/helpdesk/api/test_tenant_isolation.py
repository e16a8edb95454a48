"""A member of account A reaches nothing of account B on any helpdesk route: 404 (not 403), nothing changed."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from helpdesk.models import Conversation, Membership, Message
from tests.factories import ConversationFactory, MembershipFactory, MessageFactory

pytestmark = pytest.mark.django_db

ROUTES = [
    ("get", "", None),
    ("get", "messages/", None),
    ("post", "messages/", {"content": "leak?"}),
    ("post", "messages/", {"content": "leak?", "private": True}),
    ("post", "status/", {"status": "resolved"}),
    ("post", "labels/", {"label": "leak"}),
    ("post", "priority/", {"priority": "urgent"}),
    ("post", "assignee/", {"user_id": None}),
]


@pytest.fixture
def a_admin():
    return MembershipFactory(role=Membership.Role.ADMIN)


@pytest.fixture
def b_conversation():
    conversation = ConversationFactory(status=Conversation.Status.OPEN)
    MembershipFactory(account=conversation.account)
    MessageFactory(conversation=conversation)
    return conversation


def _assert_b_untouched(conversation):
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.OPEN
    assert conversation.priority == Conversation.Priority.NONE
    assert not conversation.labels.exists()
    assert Message.objects.filter(conversation=conversation).count() == 1


@pytest.mark.parametrize(("method", "suffix", "body"), ROUTES)
def test_other_accounts_url_answers_404(a_admin, b_conversation, method, suffix, body):
    api = APIClient()
    api.force_authenticate(a_admin.user)

    response = getattr(api, method)(
        f"/api/v1/accounts/{b_conversation.account_id}/conversations/{b_conversation.id}/{suffix}",
        body,
        format="json",
    )

    assert response.status_code == 404
    _assert_b_untouched(b_conversation)


@pytest.mark.parametrize(("method", "suffix", "body"), ROUTES)
def test_other_accounts_conversation_under_own_account_answers_404(
    a_admin, b_conversation, method, suffix, body
):
    api = APIClient()
    api.force_authenticate(a_admin.user)

    response = getattr(api, method)(
        f"/api/v1/accounts/{a_admin.account_id}/conversations/{b_conversation.id}/{suffix}",
        body,
        format="json",
    )

    assert response.status_code == 404
    _assert_b_untouched(b_conversation)


def test_other_accounts_list_answers_404(a_admin, b_conversation):
    api = APIClient()
    api.force_authenticate(a_admin.user)

    assert api.get(f"/api/v1/accounts/{b_conversation.account_id}/conversations/").status_code == 404
