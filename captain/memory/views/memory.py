"""The AI's memory on the conversation page: the panel (built for `CaptainResponder.memory_panel`) and the form it
posts to. Any member of the account may edit, as the agent writer: only variables whose declaration lets agents
write are editable, and a value must fit the declaration (captain.memory.services.memory decides both). Only the
fields whose text differs from what the page showed are written; one refusal and nothing is saved.
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from captain.answering.services.runs import assistant_for_inbox
from captain.memory.models import MemoryValue, MemoryVariable
from captain.memory.services.memory import (
    MemoryEntry,
    MemoryWriteRefused,
    memory_clear,
    memory_state,
    memory_write,
)
from helpdesk.models import Conversation, Membership
from helpdesk.selectors import access_conversation
from helpdesk.views.base import account_view

FIELD_PREFIX = "mem_"


def memory_text(value: object) -> str:
    """A value as a form field holds it (and posts it back when unchanged)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _row(entry: MemoryEntry) -> dict[str, object]:
    return {
        "name": entry.name,
        "description": entry.description,
        "kind": entry.kind,
        "scope": MemoryVariable.Scope(entry.scope).label,
        "choices": list(entry.choices),
        "value": entry.value,
        "text": memory_text(entry.value),
        "source": entry.source,
        "written_by": MemoryValue.Writer(entry.written_by).label if entry.written_by else "",
        "editable": entry.writable_by_agents,
    }


def memory_panel_context(*, conversation: Conversation) -> dict[str, object] | None:
    """Where the panel posts, the assistant, and every declared variable with the value this conversation sees;
    None when no assistant answers the inbox or it declares no memory."""
    assistant = assistant_for_inbox(conversation.inbox_id)
    if assistant is None:
        return None
    entries = memory_state(assistant=assistant, conversation=conversation)
    if not entries:
        return None
    return {
        "url": reverse(
            "captain-dashboard:conversation-memory", args=[conversation.account_id, conversation.pk]
        ),
        "assistant": assistant.name,
        "entries": [_row(entry) for entry in entries],
        "editable": any(entry.writable_by_agents for entry in entries),
    }


@require_POST
@account_view()
def conversation_memory_action(
    request: HttpRequest, membership: Membership, conversation_id: int
) -> HttpResponse:
    conversation = access_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    back = redirect("dashboard:conversation-detail", membership.account_id, conversation.pk)
    assistant = assistant_for_inbox(conversation.inbox_id)
    if assistant is None:
        flash.error(request, _("No assistant answers this conversation's inbox."))
        return back
    shown = {
        entry.name: memory_text(entry.value)
        for entry in memory_state(assistant=assistant, conversation=conversation)
    }
    posted = {
        field.removeprefix(FIELD_PREFIX): request.POST.get(field, "").strip()
        for field in request.POST
        if field.startswith(FIELD_PREFIX)
    }
    changes = {name: text for name, text in posted.items() if text != shown.get(name, "").strip()}
    if not changes:
        flash.info(request, _("Memory unchanged."))
        return back
    errors: list[str] = []
    try:
        with transaction.atomic():
            for name, text in changes.items():
                try:
                    if text:
                        memory_write(
                            assistant=assistant,
                            conversation=conversation,
                            name=name,
                            value=text,
                            writer=MemoryValue.Writer.AGENT,
                        )
                    else:
                        memory_clear(
                            assistant=assistant,
                            conversation=conversation,
                            name=name,
                            writer=MemoryValue.Writer.AGENT,
                        )
                except MemoryWriteRefused as exc:
                    errors.append(str(exc))
            if errors:
                raise MemoryWriteRefused(" ".join(errors))  # rolls back the names written before the refusal
    except MemoryWriteRefused as exc:
        flash.error(request, _("Nothing saved: %(why)s") % {"why": exc})
        return back
    flash.success(request, _("Memory saved."))
    return back
