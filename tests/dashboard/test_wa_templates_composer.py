"""The composer on a WhatsApp conversation whose 24-hour window is closed: it says so and offers the inbox's
approved templates (one field per variable, the body as preview); a free-text reply is refused at once with that
explanation (the text kept), a note still goes; a template sent from the page is stored as the filled reply.
An open window, or another channel, shows none of it."""

from __future__ import annotations

import html
from datetime import timedelta

import pytest
from django.utils import timezone

from helpdesk.models import Inbox, Message, WhatsAppTemplate
from tests.factories import ConversationFactory, InboxFactory, MessageFactory

pytestmark = pytest.mark.django_db


def url(team, conversation, suffix: str = "") -> str:
    return f"/app/accounts/{team.account.id}/conversations/{conversation.id}/{suffix}"


@pytest.fixture
def whatsapp(team) -> Inbox:
    inbox = InboxFactory(account=team.account, name="WhatsApp", channel_type=Inbox.ChannelType.WHATSAPP)
    WhatsAppTemplate.objects.create(inbox=inbox, name="follow_up", language="en_US", body="Still on {{1}}?")
    WhatsAppTemplate.objects.create(
        inbox=inbox, name="draft_one", language="en_US", body="x", status="pending"
    )
    return inbox


def conversation_last_written(inbox: Inbox, hours_ago: float):
    conversation = ConversationFactory(contact_inbox__inbox=inbox, status="open")
    message = MessageFactory(conversation=conversation, content="Where is my parcel?")
    Message.objects.filter(pk=message.pk).update(created_at=timezone.now() - timedelta(hours=hours_ago))
    return conversation


def test_closed_window_offers_approved_templates(agent_client, team, whatsapp) -> None:
    conversation = conversation_last_written(whatsapp, hours_ago=25)
    body = html.unescape(agent_client.get(url(team, conversation)).content.decode())
    assert "WhatsApp window closed" in body and "The customer last wrote 1\xa0day, 1\xa0hour ago" in body
    assert "follow_up" in body and "draft_one" not in body  # only approved ones are offered
    assert 'name="value_1"' in body and 'name="value_2"' not in body
    assert 'data-body="Still on {{1}}?"' in body


@pytest.mark.parametrize("hours_ago", [23])
def test_open_window_or_other_channel_shows_no_templates(agent_client, team, whatsapp, hours_ago) -> None:
    open_one = conversation_last_written(whatsapp, hours_ago=hours_ago)
    assert "wa-templates" not in agent_client.get(url(team, open_one)).content.decode()
    web = conversation_last_written(team.inbox, hours_ago=48)
    assert "wa-templates" not in agent_client.get(url(team, web)).content.decode()


def test_free_text_reply_is_refused_with_the_reason_and_kept(agent_client, team, whatsapp) -> None:
    conversation = conversation_last_written(whatsapp, hours_ago=30)
    answer = agent_client.post(
        url(team, conversation, "reply/"), {"content": "Any news?", "kind": "reply"}, follow=True
    )
    body = html.unescape(answer.content.decode())
    assert "WhatsApp delivers only an approved template now" in body
    assert "Any news?</textarea>" in body
    assert not conversation.messages.filter(message_type=Message.Type.OUTGOING).exists()
    agent_client.post(url(team, conversation, "reply/"), {"content": "Customer asked twice", "kind": "note"})
    assert conversation.messages.filter(private=True, content="Customer asked twice").exists()


def test_template_sent_from_the_page(agent_client, team, whatsapp) -> None:
    conversation = conversation_last_written(whatsapp, hours_ago=30)
    template = WhatsAppTemplate.objects.get(name="follow_up")
    empty = agent_client.post(
        url(team, conversation, "whatsapp-template/"), {"template": template.pk}, follow=True
    )
    assert "Fill in every value" in html.unescape(empty.content.decode())
    sent = agent_client.post(
        url(team, conversation, "whatsapp-template/"),
        {"template": template.pk, "value_1": "your refund"},
        follow=True,
    )
    assert "Template queued for delivery." in sent.content.decode()
    reply = conversation.messages.get(message_type=Message.Type.OUTGOING)
    assert (reply.content, reply.sender_user) == ("Still on your refund?", team.agent)
    assert reply.whatsapp_template_send.values == ["your refund"]
