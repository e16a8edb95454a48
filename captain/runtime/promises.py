"""A reply that promises a transfer is a handoff: "I'll transfer you to our billing team now." without one leaves
the customer waiting for a person nobody told. An offer ("Would you like me to connect you?") is a question back,
not a promise, and stays a reply."""

from __future__ import annotations

import re

_PROMISE_RE = re.compile(
    r"\b(i'?ll|i will|i am going to|i'm going to|let me|i'?m|i am|we'?ll|we will)\b[^.!?\n]{0,40}?"
    r"\b(transfer|connect|escalat|hand(ing)?\s+(you\s+)?over|redirect|forward|route|pass)\w*"
    r"|\b(transferring|connecting|escalating|forwarding) (you|your (request|case|conversation)|this)"
    r"|\b(a|an|our) (colleague|agent|specialist|team member|member of (our|the) team|human) will "
    r"(contact|reach|be with|get back to|call|join|help) you"
    r"|(为您|帮您|给您|帮你|为你|我来|我将|马上|现在|正在|这就|立即)[^。！？\n]{0,8}?(转接|转给|转到|转交)"
    r"|(同事|人工|客服|专员).{0,6}(会|将|马上).{0,6}(联系|回复|接待|处理)您",
    re.IGNORECASE,
)
_OFFER_RE = re.compile(
    r"\b(would you like|do you want|shall i|should i|can i)\b|需要.*吗|要不要|是否需要", re.I
)

HONEST_HANDOFF = {
    "en": "I'm not sure about that, and I don't want to tell you something wrong, so I'm getting a colleague "
    "to help you.",
    "zh": "这个问题我不太确定，不想给您错误的信息，我请同事来帮您。",
}
"""What the customer reads when the AI's reply was not sent because no source supports it."""


_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")


PROMISED_TRANSFER = "The AI told the customer it would transfer them but made no transfer, so it handed over."


def said_transfer(reply: str) -> bool:
    """Whether a sentence of `reply` says a transfer happens (not offers one)."""
    for sentence in _SENTENCE_RE.split(reply):
        if sentence.rstrip().endswith(("?", "？")) or _OFFER_RE.search(sentence):
            continue
        if _PROMISE_RE.search(sentence):
            return True
    return False
