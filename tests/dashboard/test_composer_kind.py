"""The composer remembers note vs reply per conversation: after a note it stays on "note" for that conversation
(it used to fall back to "reply" after each note), other conversations start on "reply", and a reply sets it back."""

from __future__ import annotations

import re

import pytest

from helpdesk.views.composer import COMPOSER_KINDS_KEPT
from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db


def page(team, conversation, suffix: str = "") -> str:
    return f"/app/accounts/{team.account.id}/conversations/{conversation.id}/{suffix}"


def checked_kind(client, team, conversation) -> str:
    html = client.get(page(team, conversation)).content.decode()
    (kind,) = re.findall(r'name="kind" value="(\w+)" checked', html)
    assert f'data-kind="{kind}"' in html
    return kind


def test_a_note_keeps_the_composer_on_note_for_that_conversation_only(agent_client, team):
    first, second = (ConversationFactory(contact_inbox__inbox=team.inbox, status="open") for _ in range(2))
    assert checked_kind(agent_client, team, first) == "reply"
    agent_client.post(page(team, first, "reply/"), {"content": "VIP", "kind": "note"})
    assert checked_kind(agent_client, team, first) == "note"
    assert checked_kind(agent_client, team, second) == "reply"
    agent_client.post(page(team, first, "reply/"), {"content": "Hello", "kind": "reply"})
    assert checked_kind(agent_client, team, first) == "reply"


def test_a_refused_kind_changes_nothing_and_the_memory_is_bounded(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    agent_client.post(page(team, conversation, "reply/"), {"content": "x", "kind": "<script>"})
    assert checked_kind(agent_client, team, conversation) == "reply"
    session = agent_client.session
    session["composer_kinds"] = {str(n): "note" for n in range(1, COMPOSER_KINDS_KEPT + 10)}
    session.save()
    agent_client.post(page(team, conversation, "reply/"), {"content": "note", "kind": "note"})
    kinds = agent_client.session["composer_kinds"]
    assert len(kinds) == COMPOSER_KINDS_KEPT and kinds[str(conversation.id)] == "note"
