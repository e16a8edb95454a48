"""Side-effecting tool calls held for the customer's confirmation, and the customer's answer to them.

A call that changes something (a refund, an address change) ends the run with a question; the call is stored
here exactly as asked (`ToolConfirmation`). On the customer's next message the answer is read before the
model runs: an unambiguous yes runs the stored call (the model cannot change its arguments afterwards), a no
or anything else leaves it undone and the model is told so. Reading the answer is deliberately strict: only a
message that says nothing but yes (in English or Chinese, with typos and politeness) confirms, because
"yes but make it 10 euros" must not refund 20.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from django.db import transaction
from django.utils import timezone

from captain.actions.models import ToolConfirmation
from captain.assistants.models import Assistant
from captain.runtime import ConfirmedCall, PendingCall
from helpdesk.models import Conversation, Message

Answer = Literal["yes", "no", "other"]

CONFIRMATION_TTL = timedelta(hours=24)

# Whole-message affirmations, after lowercasing and removing punctuation, emoji and politeness.
_YES = {
    "yes", "y", "ye", "yes yes", "yeah", "yea", "yep", "yup", "yess", "yesss", "yse", "ys", "sure", "ok", "okay",
    "okey", "k", "kk", "confirm", "confirmed", "i confirm", "go ahead", "go on", "do it", "please do",
    "correct", "right", "thats right", "that is right", "agreed", "i agree", "proceed", "yes do it",
    "yes go ahead", "sure go ahead", "ok go ahead", "ok do it", "sounds good", "perfect", "absolutely",
    "of course", "yes confirm", "yes i confirm", "si", "oui", "ja",
    "是", "是的", "好", "好的", "好啊", "可以", "行", "确认", "确定", "对", "对的", "没问题", "同意", "嗯", "嗯嗯",
    "好的确认", "确认一下", "可以的", "是的确认", "要", "要的", "麻烦了", "好的麻烦了",
}  # fmt: skip
_POLITE = re.compile(
    r"\b(please|pls|plz|thanks|thank you|thx|ty|for me|then)\b|谢谢|请|吧|啊|呀|哈|的吧",
)
# A message that starts by saying no. Anything else that is not a plain yes leaves the call undone too (it
# lapses), so this only decides which note the model gets.
_NO = re.compile(
    r"^(no+|n|nope|nah|not now|dont|don't|do not|cancel|stop|wait|never mind|nevermind)\b"
    r"|^(不|不要|别|取消|算了|不用|等等|先不)",
    re.IGNORECASE,
)


# Words a yes may carry besides the question's own ("yes, do it now", "yes cancel it").
_FILLER = {"it", "that", "this", "them", "now", "the", "go", "ahead", "do", "please", "and", "so"}


def _restates(rest: list[str], question: str) -> bool:
    """The words after the yes only repeat what was asked ("yes cancel it" to "Cancel order 1006?"): nothing
    new, no other number, no other action."""
    asked = set(re.findall(r"\w+", unicodedata.normalize("NFKC", question).lower()))
    return bool(asked) and all(word in _FILLER or word in asked for word in rest)


def customer_answer(text: str, question: str = "") -> Answer:
    """`yes` only when the message says nothing but yes (or yes and words of the `question` itself); `no` when
    it starts by saying no; else `other`."""
    normalised = unicodedata.normalize("NFKC", text).lower().strip()
    words = re.sub(r"[^\w\s']+", " ", normalised)
    words = _POLITE.sub(" ", words)
    words = re.sub(r"\s+", " ", words).strip().replace("'", "")
    if not re.search(r"[a-z]", words):
        words = words.replace(" ", "")  # Chinese is written without spaces: "是的, 确认" reads as "是的确认"
    if _NO.search(words):
        return "no"
    if words in _YES:
        return "yes"
    tokens = words.split()
    for size in (3, 2, 1):
        if " ".join(tokens[:size]) in _YES and _restates(tokens[size:], question):
            return "yes"
    return "other"


@dataclass(frozen=True)
class Settled:
    row: ToolConfirmation
    answer: Answer
    call: ConfirmedCall


def confirmation_pending(conversation: Conversation) -> ToolConfirmation | None:
    return (
        ToolConfirmation.objects.filter(conversation=conversation, status=ToolConfirmation.Status.PENDING)
        .order_by("-id")
        .first()
    )


def confirmation_settle(*, conversation: Conversation, message_ids: list[int]) -> Settled | None:
    """Read the customer's answer to the conversation's held call from this run's messages and settle it.

    The row leaves `pending` in a conditional update before anything runs, so two runs can never both run the
    call, and a run killed after running it never runs it again (at most once: a refund is not retried)."""
    row = confirmation_pending(conversation)
    if row is None:
        return None
    if _stale(row, conversation):
        ToolConfirmation.objects.filter(pk=row.pk, status=ToolConfirmation.Status.PENDING).update(
            status=ToolConfirmation.Status.LAPSED, decided_at=timezone.now()
        )
        return None
    texts = list(
        Message.objects.filter(pk__in=message_ids, message_type=Message.Type.INCOMING)
        .order_by("created_at", "id")
        .values_list("content", flat=True)
    )
    text = " ".join(t for t in texts if t).strip()
    answer = customer_answer(text, row.question) if text else "other"
    status = {
        "yes": ToolConfirmation.Status.CONFIRMED,
        "no": ToolConfirmation.Status.DECLINED,
        "other": ToolConfirmation.Status.LAPSED,
    }[answer]
    with transaction.atomic():
        claimed = ToolConfirmation.objects.filter(pk=row.pk, status=ToolConfirmation.Status.PENDING).update(
            status=status,
            decided_at=timezone.now(),
            answer_message_id=max(message_ids) if message_ids else None,
        )
    if not claimed:
        return None
    row.refresh_from_db()
    note = {
        "yes": "The customer confirmed.",
        "no": "The customer declined; nothing was done. Do not do it unless they ask again.",
        "other": "The customer did not confirm (they wrote something else); nothing was done. Ask again only "
        "if they still want it.",
    }[answer]
    return Settled(
        row=row,
        answer=answer,
        call=ConfirmedCall(tool=row.tool_name, arguments=row.arguments, confirmed=answer == "yes", note=note),
    )


def _stale(row: ToolConfirmation, conversation: Conversation) -> bool:
    """A yes answers the question only while it is the last thing said to the customer, and not days later:
    after a person wrote meanwhile, or a day passed, "yes" may mean anything."""
    if timezone.now() - row.created_at > CONFIRMATION_TTL:
        return True
    latest = (
        Message.objects.filter(conversation=conversation, message_type=Message.Type.OUTGOING, private=False)
        .order_by("-created_at", "-id")
        .values_list("pk", flat=True)
        .first()
    )
    return latest != row.asked_message_id


def confirmation_record_result(row: ToolConfirmation, result: str) -> None:
    ToolConfirmation.objects.filter(pk=row.pk).update(result=result[:4000])


def confirmation_hold(
    *,
    conversation: Conversation,
    assistant: Assistant | None,
    pending: PendingCall,
    asked_message: Message | None,
) -> ToolConfirmation:
    """Store the call the reply asks about; an older question still open is superseded (lapsed)."""
    ToolConfirmation.objects.filter(conversation=conversation, status=ToolConfirmation.Status.PENDING).update(
        status=ToolConfirmation.Status.LAPSED, decided_at=timezone.now()
    )
    return ToolConfirmation.objects.create(
        account_id=conversation.account_id,
        assistant=assistant,
        conversation=conversation,
        agent_key=pending.agent_key,
        tool_name=pending.tool,
        arguments=pending.arguments,
        question=pending.question,
        asked_message=asked_message,
    )
