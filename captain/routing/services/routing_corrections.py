"""Learning from corrections: a customer message the router sent to the wrong node becomes a pending example
(`RoutingExample`, source `correction`) for the node it should have gone to; an administrator accepts it in
one click (captain/routing/views/routing_corrections.py), and from then on the router compares messages with it.

Three signals reveal a wrong route, each recorded by one function here:

- `conversation_reroute`: a person says "this should have gone to X" on the conversation page or through the
  API. The correction is for the last customer message the router decided about; the conversation moves to X
  (or to people).
- `corrections_from_dispatch`: within one message, a specialist handed the message back to triage and triage
  routed it on (or kept it). Called by the run service with the decisions it has just recorded.
- `correction_from_takeover`: a person took the conversation over from the AI shortly after a routing decision
  that moved it to another node (helpdesk tells the AI responder, captain.integration).

Every signal goes through `record_correction`, which keeps only what can teach the router something.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Protocol

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from captain.answering.services.outcomes import handoff_message_for
from captain.assistants.models import MAX_SCENARIO_KEY_LENGTH, TRIAGE_KEY, Assistant, Scenario
from captain.conf import captain_setting
from captain.routing.models import RoutingDecision, RoutingExample
from helpdesk.models import Conversation, Message
from helpdesk.services.activities import message_create_activity
from helpdesk.services.conversations import conversation_escalate, conversation_set_status

logger = logging.getLogger(__name__)

HUMAN_KEY = "human"
"""The terminal node: the conversation goes to people (`captain.runtime.routing.graph.HUMAN`)."""

MAX_CORRECTION_CHARS = 500
"""Longer customer messages are not recorded at all rather than cut: a long message usually carries several
requests or a story around one, so neither the whole (too long for `RoutingExample.text`) nor a cut-off head
(which may not even reach the request) is a clean example of one node; and the router compares messages with
short phrases."""

Signal = RoutingExample.Signal
Status = RoutingExample.Status
_SPACES = re.compile(r"\s+")


class DecisionLike(Protocol):
    """What the hand-back check reads of a routing decision (the runtime's `Decision` or a stored row)."""

    @property
    def node(self) -> str: ...
    @property
    def phase(self) -> str: ...
    @property
    def target(self) -> str: ...


class RerouteRefused(ValueError):
    """The conversation cannot be re-routed to that key; `valid_keys` lists what it can be re-routed to."""

    def __init__(self, message: str, valid_keys: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.valid_keys = list(valid_keys)


@dataclass(frozen=True)
class Rerouted:
    """What a re-route did."""

    key: str
    """The node the person chose."""
    correction: RoutingExample | None
    """The example recorded (or found: one per node and text) for the last routed message; None when there was
    nothing to learn (no routed message, the router already chose that node, a message too long...)."""
    moved: bool
    """The conversation is now where `key` says: the AI continues at that node, or people have it. False when
    only the correction was recorded (a resolved conversation, or people already had it)."""
    status: str
    """The conversation's status afterwards."""


@dataclass(frozen=True)
class RerouteOptions:
    """What the conversation page shows for "This should have gone to ...": the nodes, and the message."""

    choices: list[tuple[str, str]]
    """(key, title) of triage, every enabled scenario and people."""
    current: str
    """The node in charge now (triage when none is recorded)."""
    message: str
    """The customer message the router decided about last ("" when it decided about none yet)."""
    routed_to: str
    """Title of where the router sent it."""


def normalized_text(content: str) -> str:
    """The example text of a customer message: blanks collapsed, so one sentence typed twice is one example."""
    return _SPACES.sub(" ", content).strip()


def assistant_for_conversation(conversation: Conversation) -> Assistant | None:
    return Assistant.objects.filter(assistant_inboxes__inbox_id=conversation.inbox_id).first()


def learnable_keys(assistant: Assistant) -> list[str]:
    """Nodes a correction may teach: triage and the enabled scenarios. The router reads examples for these
    only; people (`human`) keep their built-in description, so a correction for them would never be used."""
    enabled = Scenario.objects.filter(assistant=assistant, enabled=True).order_by("id")
    return [TRIAGE_KEY, *enabled.values_list("key", flat=True)]


def node_titles(assistant: Assistant) -> dict[str, str]:
    """Key -> what a person reads for it: triage, every scenario (disabled ones too: old corrections name
    them), people."""
    titles = {TRIAGE_KEY: f"Triage ({assistant.name})"}
    for key, title, enabled in Scenario.objects.filter(assistant=assistant).values_list(
        "key", "title", "enabled"
    ):
        titles[key] = title if enabled else f"{title} (disabled)"
    titles[HUMAN_KEY] = "People (the team)"
    return titles


AGENT_TRIAGE_TITLE = "General questions (the AI sorts them out)"
AGENT_HUMAN_TITLE = "A person on the team"


def agent_titles(assistant: Assistant) -> dict[str, str]:
    """What agents read for each node on the conversation page: the topics by their titles, without the
    router's words ("triage", the assistant's name, "node")."""
    return {**node_titles(assistant), TRIAGE_KEY: AGENT_TRIAGE_TITLE, HUMAN_KEY: AGENT_HUMAN_TITLE}


def record_correction(
    *, conversation: Conversation, message: Message, right_key: str, signal: str, routed_to: str
) -> RoutingExample | None:
    """Record the customer's `message` as a pending correction example for `right_key` of the conversation's
    assistant, the router having sent it to `routed_to`.

    Returns None when there is nothing to learn: a message that is not the customer's (or not of this
    conversation), an empty one or one over MAX_CORRECTION_CHARS, `right_key == routed_to`, a key that is not
    one of the assistant's learnable nodes, or no assistant. A text the node already has (pending, accepted,
    drafted or rejected: one row per node and text, by constraint) is returned as it is: a repeat changes
    nothing, and a text an administrator rejected is not proposed again.
    """
    if signal not in Signal.values:
        raise ValueError(f"Unknown correction signal {signal!r}")
    from_customer = (
        message.conversation_id == conversation.pk
        and message.message_type == Message.Type.INCOMING
        and message.sender_type == Message.SenderType.CONTACT
        and not message.private
    )
    text = normalized_text(message.content or "")
    if not from_customer or not text or len(text) > MAX_CORRECTION_CHARS or right_key == routed_to:
        return None
    assistant = assistant_for_conversation(conversation)
    if assistant is None or right_key not in learnable_keys(assistant):
        return None
    # get_or_create inserts in a savepoint and reads the winner on an IntegrityError: two signals for the same
    # text at once end in one row.
    example, _ = RoutingExample.objects.get_or_create(
        assistant=assistant,
        key=right_key,
        text=text,
        defaults={
            "account_id": assistant.account_id,
            "source": RoutingExample.Source.CORRECTION,
            "status": Status.PENDING,
            "signal": signal,
            "routed_to": routed_to[:MAX_SCENARIO_KEY_LENGTH],
            "conversation": conversation,
            "message": message,
        },
    )
    return example


def last_routed(conversation_id: int) -> RoutingDecision | None:
    """The conversation's latest routing decision about a customer message (with the message)."""
    return (
        RoutingDecision.objects.filter(conversation_id=conversation_id, message__isnull=False)
        .select_related("message")
        .order_by("-id")
        .first()
    )


# ---- signal 1: a person re-routes the conversation ------------------------------------------------------------


def reroute_options(*, conversation: Conversation) -> RerouteOptions | None:
    """The choices for the conversation page; None when no assistant answers the conversation's inbox."""
    assistant = assistant_for_conversation(conversation)
    if assistant is None:
        return None
    titles = agent_titles(assistant)
    keys = [*learnable_keys(assistant), HUMAN_KEY]
    decision = last_routed(conversation.pk)
    return RerouteOptions(
        choices=[(key, titles[key]) for key in keys],
        current=conversation.ai_agent_key or TRIAGE_KEY,
        message=decision.message.content if decision and decision.message else "",
        routed_to=titles.get(decision.target, decision.target) if decision else "",
    )


@transaction.atomic
def conversation_reroute(*, conversation: Conversation, key: str, user: User) -> Rerouted:
    """A person says the conversation should have gone to `key` (triage, an enabled scenario or `human`).

    The last customer message the router decided about becomes a correction for `key` (routed to where that
    decision sent it), superseding the other pending corrections of that message: a person's explicit choice
    beats what a hand-back or a takeover suggested. Then the conversation moves:

    - AI handling it (`pending`): the node in charge becomes `key`, and the AI continues there with the
      customer's next message; `human` hands it to people as the AI's own handoff does (the customer gets the
      handoff message, the team a note with the reason).
    - people handling it (`open`): `key` hands it back to the AI at that node; `human` changes nothing.
    - resolved or snoozed: only the correction is recorded.

    Raises RerouteRefused (with the valid keys) for an unknown key or a conversation no assistant answers.
    """
    assistant = assistant_for_conversation(conversation)
    if assistant is None:
        raise RerouteRefused("No AI assistant answers this conversation's inbox.")
    valid = [*learnable_keys(assistant), HUMAN_KEY]
    if key not in valid:
        raise RerouteRefused(f"Unknown node {key!r}. Valid keys: {', '.join(valid)}.", valid)
    conversation = Conversation.objects.select_for_update(no_key=True).get(pk=conversation.pk)

    correction = None
    decision = last_routed(conversation.pk)
    if decision is not None and decision.message is not None:
        correction = record_correction(
            conversation=conversation,
            message=decision.message,
            right_key=key,
            signal=Signal.REROUTE,
            routed_to=decision.target,
        )
        if correction is not None:
            RoutingExample.objects.filter(
                assistant=assistant,
                message=decision.message,
                source=RoutingExample.Source.CORRECTION,
                status=Status.PENDING,
            ).exclude(pk=correction.pk).delete()

    moved = False
    status = conversation.status
    if key == HUMAN_KEY:
        if status == Conversation.Status.PENDING:
            conversation.ai_agent_key = ""
            conversation.save(update_fields=["ai_agent_key"])
            conversation_escalate(
                conversation=conversation,
                reason=f"{user} re-routed the conversation to people.",
                customer_message=handoff_message_for(conversation, assistant),
                by=str(user),
                actor=user,
            )
            moved = True
    elif status in (Conversation.Status.PENDING, Conversation.Status.OPEN):
        if status == Conversation.Status.OPEN:
            # Handing back resets the node to triage; the chosen node is set right after, in this transaction.
            conversation = conversation_set_status(
                conversation=conversation, status=Conversation.Status.PENDING, actor=user
            )
        conversation.ai_agent_key = key
        conversation.save(update_fields=["ai_agent_key"])
        title = agent_titles(assistant).get(key, key)
        message_create_activity(
            conversation=conversation, content=f"{user} moved the conversation to the topic {title}."
        )
        moved = True
    conversation.refresh_from_db(fields=["status"])
    return Rerouted(key=key, correction=correction, moved=moved, status=conversation.status)


# ---- signal 2: a specialist hands the message back -------------------------------------------------------------


def hand_backs(decisions: Sequence[DecisionLike]) -> list[tuple[str, str]]:
    """(right node, node that handed back) for each hand-back of one message that triage then re-dispatched.

    Dispatch records a re-dispatch (phase `redispatch`, at triage) only right after a specialist's decision
    that handed the message back to triage, and not after a builder's rule that did (a rule saying "back to
    triage" means triage). The node triage chose (itself when it kept the message) is where the message
    belonged; the specialist's earlier hold on it was the mistake.
    """
    found = []
    for before, after in pairwise(decisions):
        if (
            after.phase == "redispatch"
            and after.node == TRIAGE_KEY
            and before.node != TRIAGE_KEY
            and before.target == TRIAGE_KEY
        ):
            found.append((after.target, before.node))
    return found


def corrections_from_dispatch(
    *, conversation: Conversation, message_id: int | None, decisions: Sequence[DecisionLike]
) -> list[RoutingExample]:
    """Record a hand-back correction for each hand-back in one message's decisions (see `hand_backs`).

    Never raises: learning is a side line of answering the customer, and a failure here must not turn a
    good reply into a handoff. Failures are logged."""
    pairs = hand_backs(decisions)
    if not pairs or message_id is None:
        return []
    recorded: list[RoutingExample] = []
    try:
        with transaction.atomic():  # a savepoint when the caller has a transaction open
            message = Message.objects.filter(pk=message_id, conversation_id=conversation.pk).first()
            if message is None:
                return []
            for right_key, handed_back_by in pairs:
                example = record_correction(
                    conversation=conversation,
                    message=message,
                    right_key=right_key,
                    signal=Signal.HAND_BACK,
                    routed_to=handed_back_by,
                )
                if example is not None:
                    recorded.append(example)
        return recorded
    except Exception:
        logger.exception("could not record the hand-back correction of message %s", message_id)
        return []


# ---- signal 3: a person takes over right after a switch ---------------------------------------------------------


def correction_from_takeover(*, conversation_id: int, now: datetime | None = None) -> RoutingExample | None:
    """A person took the conversation over from the AI. If the router moved the last customer message to
    another node within `CORRECTION_TAKEOVER_SECONDS` before, the move is taken as wrong: the message becomes
    a correction for the node the conversation was at before it (routed to where it ended). A message that
    stayed where it was says nothing about which node was right: nothing is recorded."""
    window = float(captain_setting("CORRECTION_TAKEOVER_SECONDS"))
    if window <= 0:
        return None
    latest = last_routed(conversation_id)
    now = now or timezone.now()
    if latest is None or latest.message is None or latest.created_at < now - timedelta(seconds=window):
        return None
    # Every decision taken for that message in that run: where the message found the conversation, where it
    # left it (a hand-back and a re-dispatch are two switches of one move).
    turn = list(
        RoutingDecision.objects.filter(
            conversation_id=conversation_id, message=latest.message, trace_id=latest.trace_id
        ).order_by("id")
    )
    start, end = turn[0].node, turn[-1].target
    if start == end or not any(d.switched for d in turn):
        return None
    return record_correction(
        conversation=Conversation.objects.get(pk=conversation_id),
        message=latest.message,
        right_key=start,
        signal=Signal.TAKEOVER,
        routed_to=end,
    )


# ---- review -----------------------------------------------------------------------------------------------------


def pending_corrections(*, assistant: Assistant) -> QuerySet[RoutingExample]:
    """The assistant's corrections waiting for review, newest first."""
    return RoutingExample.objects.filter(
        assistant=assistant, source=RoutingExample.Source.CORRECTION, status=Status.PENDING
    ).order_by("-created_at", "-id")


def correction_ids(*, assistant: Assistant, ids: Sequence[int]) -> list[int]:
    """Those of `ids` that are the assistant's corrections (a drafted example is reviewed elsewhere)."""
    return list(
        RoutingExample.objects.filter(
            assistant=assistant, source=RoutingExample.Source.CORRECTION, id__in=list(ids)
        ).values_list("id", flat=True)
    )
