"""The facts a turn's prompt carries besides the builder's text (captain.prompts.context.TurnFacts): the current
date and time in the account's time zone, the channel and how long one message may be, the conversation's state
and attributes, the customer's details and attributes (only when the assistant may share them), and the memory
variables with the values this turn sees."""

from __future__ import annotations

import dataclasses
import zoneinfo
from collections.abc import Mapping, Sequence
from datetime import datetime

from django.utils import timezone

from captain.assistants.models import Assistant
from captain.memory.services.memory import memory_state
from captain.prompts.context import MemoryLine, TurnFacts, one_line
from helpdesk.models import Account, Conversation, Inbox
from helpdesk.services.inbox_channel import message_text_limit


def _zone(name: str) -> zoneinfo.ZoneInfo:
    try:
        return zoneinfo.ZoneInfo(name or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return zoneinfo.ZoneInfo("UTC")  # a name saved before validation existed must not break a turn


def _attributes(values: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(values, Mapping):
        return ()
    return tuple(
        (str(key), one_line(value)) for key, value in sorted(values.items()) if value not in (None, "")
    )


def _time_zone(assistant: Assistant, conversation: Conversation | None) -> str:
    """The account's time zone; from the conversation's account when the caller loaded it with the conversation
    (the reply run does: one query less per run)."""
    if (
        conversation is not None
        and conversation.account_id == assistant.account_id
        and Conversation._meta.get_field("account").is_cached(conversation)
    ):
        return str(conversation.account.time_zone)
    return str(Account.objects.values_list("time_zone", flat=True).get(pk=assistant.account_id))


def turn_facts(
    *,
    assistant: Assistant,
    conversation: Conversation | None,
    channel_type: str = Inbox.ChannelType.API,
    request_values: Mapping[str, object] | None = None,
    blocks: Sequence[str] = (),
    now: datetime | None = None,
) -> TurnFacts:
    """The facts for one turn of `assistant` on `conversation` (None: a playground run, no customer yet)."""
    zone = _zone(_time_zone(assistant, conversation))
    memory = tuple(
        MemoryLine(
            name=entry.name,
            description=entry.description,
            value=one_line(entry.value) if entry.is_set else "",
            writable=entry.writable_by_ai,
            choices=entry.choices,
        )
        for entry in memory_state(
            assistant=assistant, conversation=conversation, request_values=request_values
        )
    )
    if conversation is not None:
        channel_type = conversation.inbox.channel_type
    facts = TurnFacts(
        now=(now or timezone.now()).astimezone(zone),
        time_zone=str(zone.key),
        # "API (signed webhooks)" -> "API": the model needs the channel's name, not our admin's gloss.
        channel=str(Inbox.ChannelType(channel_type).label).split(" (")[0],
        # Characters one outgoing message holds on the channel (longer replies are split, which reads badly).
        reply_limit=message_text_limit(channel_type=channel_type),
        memory=memory,
        blocks=tuple(blocks),
    )
    if conversation is None:
        return facts
    contact = conversation.contact
    share = assistant.share_contact_details
    return dataclasses.replace(
        facts,
        conversation_status=conversation.status,
        conversation_priority=conversation.priority,
        labels=tuple(conversation.labels.order_by("name").values_list("name", flat=True)),
        conversation_attributes=_attributes(conversation.custom_attributes),
        share_contact=share,
        contact_name=one_line(contact.name) if share else "",
        contact_email=contact.email if share else "",
        contact_attributes=_attributes(contact.custom_attributes) if share else (),
    )
