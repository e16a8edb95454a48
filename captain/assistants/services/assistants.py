"""Writes of assistants (the triage agent a builder configures) and of the inboxes they serve.

`AssistantFields` is the one list of builder-editable assistant fields: the API serializers and the admin form
are built from `ASSISTANT_FIELDS`. Domain rules (template sandbox, max-turns cap, an endpoint/model this account
may pick, one assistant per inbox) are checked here and raised as `ValidationError({field: [messages]})`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, Unpack

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from captain.answering.services.warmup import prompt_warm_enqueue
from captain.assistants.models import Assistant, AssistantInbox
from captain.assistants.services.builder import FieldErrors, memory_names, raise_field_errors, template_errors
from captain.assistants.services.model_endpoints import model_choice_errors
from captain.conf import captain_setting
from captain.routing.services.routing import routing_enable_default
from helpdesk.models import Inbox


class AssistantFields(TypedDict, total=False):
    """What a builder writes on an assistant (omitted keys keep the model default, or the stored value)."""

    name: str
    description: str
    product_name: str
    instructions: str
    """Jinja template source, checked in the prompt sandbox at save time."""
    response_guidelines: list[str]
    guardrails: list[str]
    handoff_message: str
    resolution_message: str
    model_endpoint: str
    """An endpoint NAME this account may pick (never a URL)."""
    model: str
    temperature: float
    max_turns: int
    """At most CAPTAIN["MAX_TURNS_CAP"]."""
    knowledge_mode: str
    """inject (default), tool or off: how the knowledge reaches the model (docs/knowledge.md)."""
    when_unknown: str
    """offer or handoff: what happens when nothing in the knowledge answers a question about the company."""
    unknown_message: str
    off_topic_message: str
    cite_links: bool
    share_contact_details: bool
    """Whether the model sees the contact's name, e-mail and custom attributes."""
    suggestions_enabled: bool
    suggestions_persona: str


ASSISTANT_FIELDS: tuple[str, ...] = tuple(AssistantFields.__annotations__)


def _only_assistant_fields(fields: Mapping[str, Any]) -> None:
    unknown = sorted(set(fields) - set(ASSISTANT_FIELDS))
    if unknown:
        raise TypeError(f"Not an assistant field: {', '.join(unknown)}")


def assistant_errors(
    *, account_id: int, fields: Mapping[str, Any], assistant: Assistant | None = None
) -> FieldErrors:
    """Why `fields` cannot be written on `assistant` (a new one when None) of the account: {} when they can.

    Only the fields given are checked; the endpoint/model pair is checked together (the stored half fills in)."""
    errors: FieldErrors = {}
    if "instructions" in fields:
        errors["instructions"] = template_errors(
            fields["instructions"] or "", memory_names=memory_names(assistant) if assistant else ()
        )
    if fields.get("max_turns") is not None:
        cap = captain_setting("MAX_TURNS_CAP")
        if fields["max_turns"] > cap:
            errors["max_turns"] = [f"At most {cap} (the server's MAX_TURNS_CAP)."]
    if "model_endpoint" in fields or "model" in fields:
        errors["model"] = model_choice_errors(
            account_id=account_id,
            endpoint=fields.get("model_endpoint", assistant.model_endpoint if assistant else ""),
            model=fields.get("model", assistant.model if assistant else ""),
        )
    return {name: messages for name, messages in errors.items() if messages}


def inbox_errors(
    *, account_id: int, inbox_ids: Sequence[int], assistant: Assistant | None = None
) -> FieldErrors:
    """An inbox of another account does not exist (never linkable); an inbox is served by one assistant."""
    found = set(Inbox.objects.filter(account_id=account_id, pk__in=inbox_ids).values_list("pk", flat=True))
    missing = [pk for pk in dict.fromkeys(inbox_ids) if pk not in found]
    if missing:
        return {"inbox_ids": [f'Invalid pk "{pk}" - object does not exist.' for pk in missing]}
    taken = AssistantInbox.objects.filter(inbox_id__in=found).select_related("assistant", "inbox")
    if assistant is not None:
        taken = taken.exclude(assistant=assistant)
    conflicts = [f"{link.inbox.name} (#{link.inbox_id}) is served by {link.assistant.name}" for link in taken]
    if conflicts:
        return {"inbox_ids": ["; ".join(conflicts) + ". Disconnect it there first."]}
    return {}


def _connect_inboxes(*, assistant: Assistant, inbox_ids: Sequence[int]) -> None:
    """Make the assistant serve exactly `inbox_ids`. The one-assistant-per-inbox constraint decides races."""
    wanted = set(inbox_ids)
    AssistantInbox.objects.filter(assistant=assistant).exclude(inbox_id__in=wanted).delete()
    have = set(AssistantInbox.objects.filter(assistant=assistant).values_list("inbox_id", flat=True))
    try:
        with transaction.atomic():
            AssistantInbox.objects.bulk_create(
                [AssistantInbox(assistant=assistant, inbox_id=inbox_id) for inbox_id in sorted(wanted - have)]
            )
    except IntegrityError as exc:
        raise ValidationError({"inbox_ids": ["An inbox is already served by another assistant."]}) from exc


@transaction.atomic
def assistant_create(
    *, account_id: int, inbox_ids: Sequence[int] = (), **fields: Unpack[AssistantFields]
) -> Assistant:
    """A new assistant of the account serving `inbox_ids`, with graph routing on (the product's default)."""
    _only_assistant_fields(fields)
    errors = assistant_errors(account_id=account_id, fields=fields)
    if inbox_ids:
        errors |= inbox_errors(account_id=account_id, inbox_ids=inbox_ids)
    raise_field_errors(errors)
    assistant = Assistant.objects.create(account_id=account_id, **fields)
    _connect_inboxes(assistant=assistant, inbox_ids=inbox_ids)
    routing_enable_default(assistant=assistant)
    return assistant


@transaction.atomic
def assistant_update(
    *, assistant: Assistant, inbox_ids: Sequence[int] | None = None, **fields: Unpack[AssistantFields]
) -> Assistant:
    """Write the given fields (others keep their value); `inbox_ids`, when given, replaces the served inboxes."""
    _only_assistant_fields(fields)
    errors = assistant_errors(account_id=assistant.account_id, fields=fields, assistant=assistant)
    if inbox_ids:
        errors |= inbox_errors(account_id=assistant.account_id, inbox_ids=inbox_ids, assistant=assistant)
    raise_field_errors(errors)
    for name, value in fields.items():
        setattr(assistant, name, value)
    if fields:
        assistant.save(update_fields=list(fields))
    if inbox_ids is not None:
        _connect_inboxes(assistant=assistant, inbox_ids=inbox_ids)
    if fields or inbox_ids:
        prompt_warm_enqueue(assistant_id=assistant.pk)
    return assistant


def assistant_delete(*, assistant: Assistant) -> None:
    """Delete the assistant with its scenarios, FAQ, routing and inbox links (its inboxes stay, unserved)."""
    assistant.delete()


def assistant_inbox_take_over(*, assistant: Assistant, inbox: Inbox) -> None:
    """Make `assistant` serve `inbox`, TAKING IT FROM the assistant that served it (the demo commands restore
    their wiring with it; builders connect inboxes with `inbox_ids`, which refuses to take one)."""
    if inbox.account_id != assistant.account_id:
        raise ValidationError({"inbox_ids": [f'Invalid pk "{inbox.pk}" - object does not exist.']})
    AssistantInbox.objects.update_or_create(inbox=inbox, defaults={"assistant": assistant})
