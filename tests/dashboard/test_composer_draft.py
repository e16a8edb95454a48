"""A refused send loses nothing: after a refused file or a text too long, the conversation page the agent is sent
back to shows the typed text in the composer, on the kind (reply or note) it was meant for, with the reason. Once:
the next load of the page starts empty. Without JavaScript (plain form posts and redirects)."""

from __future__ import annotations

import html
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from helpdesk.models import Attachment, Message
from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db


def page(team, conversation, suffix: str = "") -> str:
    return f"/app/accounts/{team.account.id}/conversations/{conversation.id}/{suffix}"


def composer(body: str) -> tuple[str, str]:
    """(checked kind, the composer textarea's text) of a rendered conversation page."""
    (kind,) = re.findall(r'name="kind" value="(\w+)" checked', body)
    (text,) = re.findall(r'<textarea name="content" id="composer-text"[^>]*>(.*?)</textarea>', body, re.S)
    return kind, html.unescape(text)


@pytest.mark.parametrize("kind", ["reply", "note"])
def test_a_refused_file_keeps_the_typed_text_and_kind_once(agent_client, team, kind):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    typed = 'Here is the <b>"invoice"</b> & the receipt\nsecond line'
    answer = agent_client.post(
        page(team, conversation, "reply/"),
        {
            "content": typed,
            "kind": kind,
            "files": SimpleUploadedFile("notes.txt", b"plain text", "text/plain"),
        },
        follow=True,
    )
    body = answer.content.decode()
    assert "notes.txt" in html.unescape(body)  # the reason names the file
    assert composer(body) == (kind, typed)
    assert not Message.objects.filter(conversation=conversation, content__startswith="Here is").exists()
    assert not Attachment.objects.exists()
    # Shown once: reloading the page (or sending after) does not bring it back.
    assert composer(agent_client.get(page(team, conversation)).content.decode()) == (kind, "")


def test_a_text_too_long_comes_back_whole_on_its_kind(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    typed = "x" * 10_001
    answer = agent_client.post(
        page(team, conversation, "reply/"), {"content": typed, "kind": "note"}, follow=True
    )
    assert "at most 10,000 characters" in answer.content.decode()
    assert composer(answer.content.decode()) == ("note", typed)


def test_a_kept_text_is_for_its_own_conversation_only(agent_client, team):
    first, second = (ConversationFactory(contact_inbox__inbox=team.inbox, status="open") for _ in range(2))
    agent_client.post(
        page(team, first, "reply/"),
        {
            "content": "For the first",
            "kind": "reply",
            "files": SimpleUploadedFile("a.txt", b"text", "text/plain"),
        },
    )
    assert composer(agent_client.get(page(team, second)).content.decode()) == ("reply", "")
    assert composer(agent_client.get(page(team, first)).content.decode()) == ("reply", "For the first")


def test_a_sent_reply_leaves_the_composer_empty(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    answer = agent_client.post(
        page(team, conversation, "reply/"), {"content": "Sent fine", "kind": "reply"}, follow=True
    )
    assert "Reply queued for delivery." in answer.content.decode()
    assert composer(answer.content.decode()) == ("reply", "")
