"""A small model's blanket refusal, and the one re-ask that answers from the evidence instead.

The bundled 0.5B model answers some ordinary questions, mostly Chinese ones, with its family's safety refusal
("我无法协助完成这个请求", "I'm sorry, but I can't assist with that.") whatever the sources hold. Such a reply
states nothing, so the grounding check has nothing to refuse, and the customer got it as the answer. It is told
from an honest "no" ("we can't deliver to Sentosa") and from a model's "I don't know" by two things that hold for
any help centre: it is the family's refusal wording (cannot assist / help, 无法协助 / 帮助 / 完成这个请求), and,
once that wording, the politeness around it and any question back are set aside, it shares no word with the
sources: a refusal about something the sources discuss ("我们无法协助办理退货") is an answer, not a refusal.

The re-ask puts the best evidence sentences and the customer's question together in the last customer message,
with the instruction in the customer's language: short and in one language, the way the small model answers
rather than declines. The check reads its reply as any other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .evidence import Scored
from .tokens import STOP_WORDS, tokens

# The refusal itself: "can't / cannot / unable to / not able to" + "assist / help", and the Chinese family wording.
_REFUSAL_RE = re.compile(
    r"\b(?:can(?:'|\u2019)?t|cannot|can not|unable to|not able to)\s+"
    r"(?:assist|help|provide (?:that|this|the|the requested|any) (?:information|assistance|help))\b"
    r"|(?:无法|不能|没法|没办法)(?:为您|帮您|给您|为你|帮你)?"
    r"(?:协助|帮助|帮忙|完成(?:这个|此|该|您的)?(?:请求|要求)"
    r"|提供(?:您|你)?(?:所要求|所需|需要|要求)?的?(?:信息|帮助|协助|资料))",
    re.IGNORECASE,
)
# What goes with a refusal and says nothing about the question: apologies, "with that", "this request".
_FILLER_RE = re.compile(
    r"(?:i'?m|i am|i)?\s*(?:very\s+|so\s+)?(?:sorry|afraid|apologi[sz]e)|unfortunately|\bbut\b|"
    r"\bwith (?:that|this|it|your (?:request|question))\b|\b(?:that|this|the|your) (?:request|question)\b|"
    r"\bthat\b|\bthis\b|\bplease\b|\byou\b|"
    r"很?抱歉|对不起|不好意思|但是|(?:协助|帮助|帮忙)?(?:您|你)?完成(?:这个|此|该|您的)?(?:请求|要求)|"
    r"(?:这个|此|该|您的)(?:请求|要求|问题)|我|您|你",
    re.IGNORECASE,
)
_SENTENCE_RE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")
MAX_REFUSAL_CHARS = 200
"""A blanket refusal is a sentence or two; a longer reply has something else to say."""
REASK_EVIDENCE = 3
"""How many evidence sentences the re-ask puts above the question."""


def _words(text: str) -> set[str]:
    """Content words: Latin words of three letters or more (not the stop list), CJK character pairs."""
    return {
        w
        for w in tokens(text)
        if w not in STOP_WORDS and not w.isdigit() and (len(w) >= 3 or ord(w[0]) > 0x2E7F)
    }


def blanket_refusal(reply: str, sources: Sequence[str]) -> bool:
    """Whether `reply` declines in the model family's refusal wording and, that wording aside, shares no word with
    `sources` (the texts the model was given). Questions back ("Would you like a person?") are set aside."""
    text = reply.strip()
    if not text or len(text) > MAX_REFUSAL_CHARS or not _REFUSAL_RE.search(text):
        return False
    statements = [s for s in _SENTENCE_RE.findall(text) if not s.rstrip().endswith(("?", "？"))]
    rest = _FILLER_RE.sub(" ", _REFUSAL_RE.sub(" ", " ".join(statements)))
    said = _words(rest)
    if not said:
        return True
    known: set[str] = set()
    for source in sources:
        known |= _words(source)
    return not (said & known)


REASK = {
    "en": (
        "What the help centre of {company} says:\n{evidence}\n\n"
        "My question: {question}\n\n"
        "Answer my question from what the help centre says above, in English, in one to three sentences. "
        "If it does not say, tell me you do not know."
    ),
    "zh": (
        "{company}帮助中心的资料：\n{evidence}\n\n"
        "我的问题：{question}\n\n"
        "请根据上面的资料，用中文回答我的问题，一到三句话。资料里没有答案就说不知道。"
    ),
}


def reask_messages(
    messages: Sequence[dict[str, Any]],
    *,
    evidence: Sequence[Scored],
    question: str,
    language: str,
    company: str,
) -> list[dict[str, Any]]:
    """The conversation with the customer's last message(s) replaced by one message holding the best evidence
    sentences, the question and the instruction, in the customer's language. Only the model sees it: the check
    still reads the conversation as it was (nothing in the re-ask becomes free to repeat)."""
    end = len(messages)
    while end > 0 and messages[end - 1]["role"] != "user":
        end -= 1
    start = end
    while start > 0 and messages[start - 1]["role"] == "user":
        start -= 1
    lines = "\n".join(f"- {e.unit.full}" for e in evidence[:REASK_EVIDENCE])
    template = REASK.get(language, REASK["en"])
    text = template.format(company=company or "the company", evidence=lines, question=question.strip())
    return [*messages[:start], {"role": "user", "content": text}, *messages[end:]]
