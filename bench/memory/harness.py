"""Play each benchmark conversation through the real run path twice, side by side: once with an assistant that
has only the chat history window, once with the same assistant and the conversation's memory variables declared.

Every customer turn arrives through `message_ingest` (what a channel webhook calls) and is answered in this
process (Celery's eager mode) by `run_for_message`: the conversation lock on a private Redis, the remember step
when variables are declared, the model over HTTP, `outcome_apply`. The database is a throw-away test database
(`bench.knowledge.harness.isolated_database`), so the product's data is never touched.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .dataset import Conversation

MODES = ("history", "memory")
"""history: no declared variables, the model has the history window only; memory: the variables declared."""
HISTORY_MESSAGES = 4
"""The history window of both modes: small enough that the fact has left it when the final question comes."""


@dataclass
class Turn:
    text: str
    outcome: str
    """The run's outcome (reply, human_handoff, error...), or `none` when no run answered the message."""
    reply: str
    seconds: float
    well_formed: bool | None
    """The reply came back as valid `{response, reasoning}` JSON, as the run's spans record it; None when the
    spans carry no such marker."""
    reasoning: bool
    """The run kept a non-empty `Run.reasoning`."""


@dataclass
class Played:
    conversation: Conversation
    mode: str
    turns: list[Turn] = field(default_factory=list)
    handoffs: int = 0
    """Turns after which the AI was no longer in charge (handed to people); the conversation was given back to
    the AI so the remaining turns were still answered and measured."""
    remembered: dict[str, Any] = field(default_factory=dict)
    """The memory values stored at the end (memory mode), by variable name."""

    @property
    def final_reply(self) -> str:
        return self.turns[-1].reply if self.turns else ""


@contextlib.contextmanager
def history_window(messages: int = HISTORY_MESSAGES) -> Iterator[None]:
    from django.conf import settings
    from django.test.utils import override_settings

    with override_settings(CAPTAIN={**settings.CAPTAIN, "HISTORY_MESSAGES": messages}):
        yield


def bench_account() -> int:
    """The account every benchmark assistant lives in, with credit for the whole run."""
    from captain.answering.models import CreditBalance
    from helpdesk.models import Account

    account = Account.objects.create(name="memory bench")
    CreditBalance.objects.create(account=account, limit=10_000_000)
    return account.id


def _assistant(conversation: Conversation, mode: str, account_id: int) -> tuple[int, int]:
    """An API inbox and its assistant for one conversation in one mode; returns (inbox id, assistant id)."""
    from captain.assistants.models import Assistant, AssistantInbox, KnowledgeMode
    from captain.memory.models import MemoryVariable
    from helpdesk.models import Inbox

    inbox = Inbox.objects.create(
        account_id=account_id,
        name=f"{conversation.id} {mode}",
        channel_type=Inbox.ChannelType.API,
        secret="bench",
    )
    assistant = Assistant.objects.create(
        account_id=account_id,
        name=f"{conversation.company or 'Support'} assistant",
        product_name=conversation.company,
        description=conversation.description,
        # No help centre here: with knowledge on, questions about the company would get the fixed "not found"
        # text instead of the model, and the benchmark would measure the knowledge gate, not memory.
        knowledge_mode=KnowledgeMode.OFF,
    )
    AssistantInbox.objects.create(assistant=assistant, inbox=inbox)
    if mode == "memory":
        for variable in conversation.variables:
            MemoryVariable.objects.create(
                assistant=assistant,
                name=variable.name,
                description=variable.description,
                kind=variable.kind,
                choices=list(variable.choices),
                writable_by_ai=True,
            )
    return inbox.id, assistant.id


def well_formed_marker(trace_id: str) -> bool | None:
    """Whether the run's replies came back as valid `{response, reasoning}` JSON, read from its stored spans: an
    attribute `...well_formed` (bool) or a reply `...shape` (`json` is well formed) on a span or on a span event
    whose name speaks of a reply or a structured reply. None when the trace holds no such marker."""
    from captain.answering.models import SpanRecord

    if not trace_id:
        return None
    found: list[bool] = []
    for span in SpanRecord.objects.filter(trace_id=trace_id).only("name", "attributes", "events"):
        places = [(span.name, span.attributes or {})]
        places += [(e.get("name", ""), e.get("attributes") or {}) for e in span.events or []]
        for name, attributes in places:
            for key, value in attributes.items():
                about_reply = any(w in f"{name} {key}" for w in ("structured", "reply"))
                if not about_reply:
                    continue
                if key.endswith("well_formed") and isinstance(value, bool):
                    found.append(value)
                elif key.endswith("shape") and isinstance(value, str):
                    found.append(value == "json")
    return all(found) if found else None


def play(conversation: Conversation, *, mode: str, account_id: int, serial: int) -> Played:
    """The customer's turns one after the other, each through ingest and answered before the next arrives."""
    from captain.answering.models import Run
    from captain.memory.services.memory import memory_state
    from helpdesk.channels.base import InboundContact, InboundMessage
    from helpdesk.models import Conversation as HelpdeskConversation
    from helpdesk.models import Inbox, Message
    from helpdesk.services.messages import message_ingest

    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (of: {', '.join(MODES)})")
    inbox_id, assistant_id = _assistant(conversation, mode, account_id)
    inbox = Inbox.objects.get(pk=inbox_id)
    source_id = f"{mode}-{conversation.id}-{serial}"
    contact = InboundContact(source_id=source_id, name="Bench customer")
    played = Played(conversation=conversation, mode=mode)
    conversation_id: int | None = None
    last_run_id = 0
    for index, text in enumerate(conversation.turns):
        started = time.monotonic()
        result = message_ingest(
            inbox=inbox,
            inbound=InboundMessage(provider_message_id=f"{source_id}-{index}", contact=contact, text=text),
        )
        seconds = time.monotonic() - started
        conversation_id = result.message.conversation_id
        run = Run.objects.filter(conversation_id=conversation_id, id__gt=last_run_id).order_by("-id").first()
        reply = ""
        if run is not None:
            last_run_id = run.id
            if run.reply_message_id:
                reply = (
                    Message.objects.filter(pk=run.reply_message_id).values_list("content", flat=True).first()
                    or ""
                )
        played.turns.append(
            Turn(
                text=text,
                outcome=run.outcome if run else "none",
                reply=reply,
                seconds=seconds,
                well_formed=well_formed_marker(run.trace_id) if run else None,
                reasoning=bool(run and run.reasoning.strip()),
            )
        )
        handed = HelpdeskConversation.objects.filter(pk=conversation_id).exclude(
            status=HelpdeskConversation.Status.PENDING
        )
        if handed.update(status=HelpdeskConversation.Status.PENDING):
            played.handoffs += 1
    if mode == "memory" and conversation_id is not None:
        from captain.assistants.models import Assistant

        entries = memory_state(
            assistant=Assistant.objects.get(pk=assistant_id),
            conversation=HelpdeskConversation.objects.get(pk=conversation_id),
        )
        played.remembered = {e.name: e.value for e in entries if e.source == "stored"}
    return played
