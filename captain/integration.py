"""The object helpdesk calls (through `HELPDESK["AI_RESPONDER"]`) so that it never imports captain itself."""

from __future__ import annotations

import logging
import time
from dataclasses import asdict
from datetime import datetime

from django.db import transaction
from django.urls import reverse

from captain.conf import captain_setting
from helpdesk.models import Conversation, Inbox, Message
from helpdesk.tracing import inject_context

logger = logging.getLogger(__name__)

# Monotonic time until which this process skips publishing after a failed publish (a per-process circuit
# breaker). Messages are stored either way; the sweeper enqueues the skipped ones once the broker is back.
_broker_down_until = 0.0


class CaptainResponder:
    def handles_inbox(self, inbox: Inbox) -> bool:
        from captain.assistants.models import AssistantInbox

        return AssistantInbox.objects.filter(inbox=inbox).exists()

    def message_stored(self, message: Message) -> None:
        """Called inside the ingest transaction for a customer message the AI will answer: its job row commits
        with the message or not at all, so no stored message is ever without one."""
        from captain.answering.services.jobs import job_create

        job_create(message=message)

    def message_received(self, message_id: int) -> None:
        """Called after the customer message is committed. A broker outage must not fail the webhook: the
        message's job is stored pending and the sweeper enqueues it once the broker is back.

        The task starts after the debounce window, so a burst of messages is answered by one run. Only a
        successful publish sets the job's `enqueued_at`; a job without it is swept within seconds.
        """
        from captain.answering import tasks
        from captain.answering.services.jobs import job_mark_published
        from captain.model_gate import customer_coming

        global _broker_down_until
        if time.monotonic() < _broker_down_until:
            # A publish failed moments ago: do not make this webhook wait for the same timeout again.
            logger.warning("broker marked down; message %s left to the sweeper", message_id)
            return
        countdown = float(captain_setting("DEBOUNCE_SECONDS"))
        # From now until the reply's first model call, no background call starts on a CPU-bound model.
        customer_coming(token=f"message:{message_id}", seconds=countdown)
        try:
            tasks.reply_generate.apply_async(
                (message_id,),
                {"trace_context": inject_context()},
                countdown=countdown if countdown > 0 else None,
            )
        except Exception:  # kombu raises several types for a down broker; all mean "the sweeper will do it"
            _broker_down_until = time.monotonic() + float(captain_setting("BROKER_DOWN_BACKOFF_SECONDS"))
            logger.exception(
                "could not enqueue the AI run for message %s; the sweeper will retry", message_id
            )
            return
        job_mark_published(message_id=message_id)

    def reply_sources(self, *, message_ids: list[int]) -> dict[int, list[dict[str, object]]]:
        """The cited knowledge of each AI reply among `message_ids` (the conversation view shows it)."""
        from captain.answering.selectors import reply_cited_sources

        return reply_cited_sources(message_ids=message_ids)

    def reroute_form(self, *, conversation: Conversation) -> dict[str, object] | None:
        """What the conversation page offers for "This should have gone to ...": where to post, the nodes, and
        the customer message the router decided about last. None when no assistant answers the inbox."""
        from captain.routing.services.routing_corrections import reroute_options

        options = reroute_options(conversation=conversation)
        if options is None:
            return None
        url = reverse(
            "captain-dashboard:conversation-reroute", args=[conversation.account_id, conversation.pk]
        )
        return {"url": url, **asdict(options)}

    def memory_panel(self, *, conversation: Conversation) -> dict[str, object] | None:
        """The conversation page's memory panel: where to post, and the assistant's memory variables with the
        values this conversation sees. None when no assistant answers the inbox or it declares no memory."""
        from captain.memory.views.memory import memory_panel_context

        return memory_panel_context(conversation=conversation)

    def copilot_panel(self, *, conversation: Conversation, membership: object) -> dict[str, object] | None:
        """The copilot under the reply box (captain.copilot.services.copilot): the partial and where it posts. None when
        no assistant answers the inbox (there is no model or knowledge to help with). Any member may use it."""
        from captain.answering.services.runs import assistant_for_inbox
        from captain.copilot.services.copilot import copilot_credits

        if assistant_for_inbox(conversation.inbox_id) is None:
            return None
        return {
            "template": "captain/partials/copilot.html",
            "start_url": reverse(
                "captain-dashboard:copilot-start", args=[conversation.account_id, conversation.pk]
            ),
            "credits": copilot_credits(),
        }

    def conversation_taken_over(self, *, conversation_id: int) -> None:
        """A person took the conversation over from the AI (inside their transaction): right after the router
        moved it, that is a sign the move was wrong, and the message is proposed as a routing correction."""
        from captain.routing.services.routing_corrections import correction_from_takeover

        # In a savepoint, and never raising: learning must not cost the person their takeover.
        try:
            with transaction.atomic():
                correction_from_takeover(conversation_id=conversation_id)
        except Exception:
            logger.exception("could not record the takeover correction of conversation %s", conversation_id)

    def judge_quiet_conversation(self, *, conversation_id: int, quiet_since: datetime) -> bool:
        """helpdesk's auto-resolve sweep: queue the model's judgement of a conversation the AI is handling that
        has been quiet since `quiet_since` (captain.auto_resolve.services.auto_resolve). False when it could not be queued."""
        from captain.auto_resolve.services.auto_resolve import judgement_enqueue

        return judgement_enqueue(conversation_id=conversation_id, quiet_since=quiet_since)

    def delivery_failed(self, message: Message) -> None:
        from captain.answering.services.credits import credit_refund

        credit_refund(message=message)


responder = CaptainResponder()
