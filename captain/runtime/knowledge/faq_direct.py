"""When an approved FAQ answer is the reply as written (no model call), and when it only answers a neighbouring
question.

A small model paraphrasing an approved answer can only lose or bend its facts, so an FAQ entry that clearly is
the question asked goes out as written. "Clearly" is more than a close cosine: "短租加一个儿童座椅多少钱" (the
child seat on a day rental) scores 0.69 against "短租多少钱" (the day rental), and "Can you deliver the bike to
Sentosa?" 0.73 against "Can you deliver the bike to my home?". Each names one specific thing (the child seat,
Sentosa) that the FAQ entry never mentions while a document passage found for the same question does: the entry
answers the neighbouring question, and its value (the day rental's price, the home-delivery fee) is a wrong
answer to this one. Such a question goes to the model with all its sources, and the check reads the reply.

"Specific" means rare in the help centre: a word that at most 1% of the assistant's passages contain (at most
2 in a small one), so "bike", "fee" or "before" in a customer's wording never count. Measured on the bundled
help centres in docs/knowledge.md#faq-answers-as-written.
"""

from __future__ import annotations

from dataclasses import dataclass

from .sources import Retrieval, Source
from .statements import GENERIC_WORDS
from .tokens import has_cjk, tokens

RARE_SHARE = 0.01
RARE_PASSAGES = 2
"""A word named by the customer is specific when at most max(RARE_PASSAGES, RARE_SHARE x passages) of the
assistant's passages contain it."""


@dataclass(frozen=True)
class FaqChoice:
    """The FAQ entry to send as written (or None), and the specific words of the question it leaves out when it
    was the closest entry but not the answer (the debug log shows them)."""

    entry: Source | None
    left_out: tuple[str, ...] = ()


def faq_direct(retrieval: Retrieval, query: str, *, threshold: float | None, margin: float) -> FaqChoice:
    """The approved answer to give as written, if one FAQ entry clearly is the question asked: close to the
    question (cosine `threshold`), ahead of the next FAQ entry by `margin`, in the customer's language, and not
    leaving out a specific thing the customer named that another found passage states."""
    if threshold is None:
        return FaqChoice(None)
    faqs = sorted((s for s in retrieval.sources if s.kind == "faq"), key=lambda s: -s.score)
    if not faqs or faqs[0].score < threshold:
        return FaqChoice(None)
    if len(faqs) > 1 and faqs[0].score - faqs[1].score < margin:
        return FaqChoice(None)
    best = faqs[0]
    if has_cjk(best.title + best.text) != has_cjk(query):
        return FaqChoice(None)  # the customer gets an answer in their own language: the model translates
    left_out = named_elsewhere(retrieval, query, best)
    return FaqChoice(None, left_out) if left_out else FaqChoice(best)


def named_elsewhere(retrieval: Retrieval, query: str, entry: Source) -> tuple[str, ...]:
    """The question's specific words that `entry` does not contain and a found document passage does."""
    rare = max(RARE_PASSAGES, RARE_SHARE * retrieval.passages)
    in_entry = set(tokens(f"{entry.title}\n{entry.text}"))
    elsewhere: set[str] = set()
    for source in retrieval.sources:
        if source.kind != "faq":
            elsewhere.update(tokens(f"{source.title}\n{source.text}"))
    return tuple(
        word
        for word in dict.fromkeys(tokens(query))
        if word not in in_entry
        and word in elsewhere
        and word not in GENERIC_WORDS
        and not word.isdigit()
        and 0 < retrieval.term_passages.get(word, 0) <= rare
    )
