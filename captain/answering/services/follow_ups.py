"""Follow-up suggestions sent after the reply, from the background lane.

The customer's reply never waits for the suggestions' model call: the run stores and delivers the reply without
buttons, and once its transaction commits it queues `reply_suggestions_send` (background lane, behind every
customer run at the model's gate). That task asks for the questions (captain.answering.services.suggestions, same
prompt and guarantees) and, when there are any and the conversation has not moved on, sends them as a short
outgoing message ("You can also ask:") carrying the quick-reply buttons, through the normal outbox, so each
channel shows them as it shows any quick replies.

Guarantees (tests/captain/answering/test_suggestions_follow_up.py):
- At most one follow-up per reply, however often the task runs: it carries the dedup key every stored message
  has, `(inbox, provider_message_id)` unique, and is written under the conversation's row lock after a check for
  that key; its delivery is then the outbox's one `Delivery` (exactly once).
- None on a channel that shows no quick replies (e-mail: a letter leaves them out).
- None when the conversation moved on by the time the questions are ready: a newer customer or public message, or
  the AI no longer in charge (handed off, taken over, resolved); none when the reply did not reach the customer
  (its delivery failed, or is still waiting after `DELIVERY_WAIT_SECONDS`: buttons must not arrive before it).
- Free: no credit is held or charged; the call's tokens are added to the reply's Run record, and its
  `gen_ai.chat` span (agent `suggestions`) joins the run's trace, so the debug log shows it.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.db import transaction
from django.db.models import F

from captain.answering.models import Run
from captain.answering.services.suggestions import (
    HISTORY_TURNS,
    TIMEOUT_SECONDS,
    suggest_follow_ups,
    suggestions_model_client,
)
from captain.answering.services.team import team_model_for
from captain.assistants.models import Assistant
from captain.assistants.services.model_endpoints import EndpointUnavailable
from captain.conf import captain_setting
from captain.queue import task
from captain.runtime import Usage
from captain.runtime.knowledge.tokens import has_cjk
from helpdesk.models import Conversation, Delivery, Message
from helpdesk.services.inbox_channel import shows_quick_replies
from helpdesk.services.messages import message_create_ai_reply
from helpdesk.tracing import inject_context

logger = logging.getLogger(__name__)

TASK_NAME = "captain.tasks.reply_suggestions_send"
KEY_PREFIX = "ai-suggestions:"
"""`Message.provider_message_id` of a reply's follow-up: `ai-suggestions:<reply id>`, unique per inbox."""
DELIVERY_WAIT_SECONDS = 20.0
"""How long the questions wait for the reply itself to reach the customer before they are dropped."""
DELIVERY_POLL_SECONDS = 0.25
INTRO = {"en": "You can also ask:", "zh": "您还可以问："}
"""The follow-up's text above the buttons, in the customer's language (the questions' own, else the inbox's)."""


def follow_up_key(reply_message_id: int) -> str:
    return f"{KEY_PREFIX}{reply_message_id}"


def suggestions_queue(*, reply_message_id: int) -> None:
    """Queue the follow-up of a reply once the caller's transaction commits (never for a rolled-back reply). A
    broker that refuses it costs the customer the buttons only."""
    carrier = inject_context()  # the run's trace: the call's span shows in the run's debug log

    def publish() -> None:
        try:
            task(TASK_NAME).delay(reply_message_id, carrier)
        except Exception:
            logger.warning("could not queue the follow-up suggestions of %s", reply_message_id, exc_info=True)

    transaction.on_commit(publish)


def _moved_on(conversation: Conversation, reply: Message) -> str:
    """Why a follow-up to `reply` would come too late ("" when it would not)."""
    if conversation.status != Conversation.Status.PENDING:
        return f"conversation {conversation.status}"
    newer = Message.objects.filter(conversation=conversation, id__gt=reply.id, private=False).exclude(
        message_type=Message.Type.ACTIVITY
    )
    if newer.filter(message_type=Message.Type.INCOMING).exists():
        return "the customer wrote again"
    if newer.exclude(provider_message_id=follow_up_key(reply.id)).exists():
        return "a newer reply"
    return ""


def _history(reply: Message) -> list[dict[str, Any]]:
    """The chat turns before the reply, as the suggestions' prompt reads them."""
    rows = list(
        Message.objects.filter(conversation_id=reply.conversation_id, id__lt=reply.id, private=False)
        .exclude(message_type=Message.Type.ACTIVITY)
        .exclude(sender_type=Message.SenderType.SYSTEM)
        .exclude(content="")
        .order_by("-id")
        .values_list("message_type", "content")[: HISTORY_TURNS * 2]
    )
    rows.reverse()
    return [
        {"role": "user" if kind == Message.Type.INCOMING else "assistant", "content": content}
        for kind, content in rows
    ]


def _reply_delivered(reply_message_id: int) -> bool:
    """Wait (bounded) until the reply left the outbox; whether it reached the customer."""
    deadline = time.monotonic() + DELIVERY_WAIT_SECONDS
    while True:
        status = Delivery.objects.filter(pk=reply_message_id).values_list("status", flat=True).first()
        if status != Delivery.Status.QUEUED or time.monotonic() >= deadline:
            return status == Delivery.Status.SENT
        time.sleep(DELIVERY_POLL_SECONDS)


def _questions(assistant: Assistant, reply: Message, run: Run | None) -> tuple[list[str], Usage]:
    """The model's questions after `reply` ([] on any failure) and the call's usage."""
    # Numbered after the run's own calls, so the debug log lists the call as the run's next one.
    usage = Usage(requests=run.llm_calls if run is not None else 0)
    before = usage.requests
    try:
        team_model = team_model_for(assistant)
        timeout = min(TIMEOUT_SECONDS, float(captain_setting("LLM_TIMEOUT_SECONDS")))
        client = suggestions_model_client(team_model.endpoint, timeout=timeout)
    except EndpointUnavailable as exc:
        logger.info("follow-up suggestions skipped: %s", exc)
        return [], Usage()
    except Exception:
        logger.exception("follow-up suggestions: no model client")
        return [], Usage()
    questions = suggest_follow_ups(
        assistant,
        model_client=client,
        model=team_model.model,
        history=_history(reply),
        reply_text=reply.content,
        usage=usage,
    )
    spent = Usage(
        requests=usage.requests - before, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens
    )
    return questions, spent


def suggestions_send(*, reply_message_id: int) -> str:
    """Entry point of `reply_suggestions_send`: the follow-up of one reply. Returns what happened (for logs and
    tests): sent, none, moved_on, not_delivered, already_sent or skipped. Never raises for a model problem."""
    reply = (
        Message.objects.select_related("inbox", "conversation", "conversation__inbox")
        .filter(pk=reply_message_id, message_type=Message.Type.OUTGOING)
        .first()
    )
    if reply is None:
        return "skipped"
    run = Run.objects.filter(reply_message_id=reply.id).select_related("assistant").first()
    assistant = run.assistant if run is not None else None
    if assistant is None or not assistant.suggestions_enabled:
        return "skipped"
    if not shows_quick_replies(channel_type=reply.inbox.channel_type):
        return "skipped"  # e.g. a letter leaves quick replies out: the follow-up would be an empty "You can ask:"
    if Message.objects.filter(inbox_id=reply.inbox_id, provider_message_id=follow_up_key(reply.id)).exists():
        return "already_sent"
    if _moved_on(reply.conversation, reply):
        return "moved_on"  # checked before the call too: no model time for a conversation that went on
    questions, spent = _questions(assistant, reply, run)
    if not questions:
        return "none"
    if not _reply_delivered(reply.id):
        logger.info("follow-up suggestions of %s dropped: the reply was not delivered", reply.id)
        return "not_delivered"
    return _follow_up_store(reply=reply, questions=questions, spent=spent)


@transaction.atomic
def _follow_up_store(*, reply: Message, questions: list[str], spent: Usage) -> str:
    """The follow-up message and its outbox row, under the conversation's row lock (the one a reply, a handoff
    and a person's take-over take), after the last checks."""
    conversation = (
        Conversation.objects.select_for_update(no_key=True, of=("self",))
        .select_related("inbox")
        .get(pk=reply.conversation_id)
    )
    key = follow_up_key(reply.id)
    if Message.objects.filter(inbox_id=reply.inbox_id, provider_message_id=key).exists():
        return "already_sent"
    reason = _moved_on(conversation, reply)
    if reason:
        logger.info("follow-up suggestions of %s dropped: %s", reply.id, reason)
        return "moved_on"
    chinese = has_cjk(" ".join(questions)) or conversation.inbox.language.lower().startswith("zh")
    message = message_create_ai_reply(
        conversation=conversation,
        content=INTRO["zh" if chinese else "en"],
        agent_key=reply.ai_agent_key,
        agent_name=reply.ai_agent_name,
        answer=False,
    )
    # Set before commit: the delivery task reads the row after this transaction commits.
    message.quick_replies = questions
    message.provider_message_id = key
    message.save(update_fields=["quick_replies", "provider_message_id"])
    Run.objects.filter(reply_message_id=reply.id).update(
        llm_calls=F("llm_calls") + spent.requests,
        input_tokens=F("input_tokens") + spent.input_tokens,
        output_tokens=F("output_tokens") + spent.output_tokens,
    )
    return "sent"
