"""A value the evidence ranks clearly below another sentence's value of the same kind is not the answer.

The grounding check (`claims`) asks whether each value of a reply comes from a sentence about what the customer
asked, by the question's rare words. Beside that, the evidence ranking (`evidence.select_evidence`: the encoder's
cosine with the question and its follow-up context, the question's words, the kind of value asked for) already
says which sentence answers best. When a sentence that states another value of the same kind (a price against a
price, a time against a time) ranks clearly above every sentence holding the reply's value, and the reply does not
give that better-ranked value too, the small model copied a neighbour: the course fee for "how much does moving
my course cost", the day's emergency fee for a care-plan member at 3 am, the bike's own weight for "can I ride it
at 110 kg". The customer gets a rewrite that names the better sentence, then "say it straight" or a person.
A value with two or more sentences of any kind ranked above its own ("buried", `BURIED_RANK`) is refused the same
way, unless the reply also gives the first sentence's value.

Measured on the tuning help centres' saved replies (`python -m bench.replay_knowledge`, docs/knowledge.md): it
refuses replies the benchmark scores wrong and none it scores right; the held-out sets report how far that carries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .findings import Finding
from .grounding import Evidence, Specific
from .units import Unit

OUTRANK_MARGIN = 0.03
"""How much higher (evidence score) the other sentence must rank than the best one holding the reply's value."""
BURIED_RANK = 2
"""A value whose best sentence has this many source sentences ranked above it (of any kind, not said already in
the conversation) is not the answer either: the small model quoted a true sentence that answers something else
(the 30 days' notice for "what's the fee if I cancel last minute?", the invoice rule for "who do I e-mail for an
invoice?"). Measured with saved replies (docs/knowledge.md, "buried values"): one sentence above is common in
right replies that give two values; two above mostly in wrong ones."""


def outranking(
    *,
    specific: Specific,
    units: Sequence[Unit],
    unit_evidence: Sequence[Evidence],
    holding: Sequence[int],
    ranking: Mapping[str, float],
    prose: int,
    reply_numbers: frozenset[str],
    said_numbers: frozenset[str] = frozenset(),
    margin: float = OUTRANK_MARGIN,
) -> Unit | None:
    """The source sentence ranked clearly above every sentence holding the number `specific`, stating another
    number (a price against a price: both with a currency or neither) that the reply does not also give, or else the
    best of `BURIED_RANK` or more sentences ranked above it; None when there is none (or the value is a tool's:
    tools are not ranked).
    `said_numbers`: the conversation's; a sentence whose values were all said already is no rival."""
    # Numbers only (prices, times, counts): the neighbouring row's value. An e-mail or a link is rarely a
    # neighbour's, and "all its values were said" and "the reply gives it too" are read on numbers.
    if specific.kind != "number" or any(i >= prose or units[i].text not in ranking for i in holding):
        return None
    best = max(ranking[units[i].text] for i in holding)
    money = any(bool(unit_evidence[i].currencies) for i in holding)
    above = [
        i
        for i in range(prose)
        if i not in holding
        and units[i].text in ranking
        and ranking[units[i].text] - best > margin
        and bool(unit_evidence[i].numbers)
        and bool(unit_evidence[i].currencies) == money
        # A follow-up ("and for adults?") ranks the answer to the turn before high: it was given, it is not
        # what is asked now.
        and not unit_evidence[i].numbers <= said_numbers
    ]
    # A reply that also gives the better-ranked value answered it; the other value is an addition, not a swap.
    if above and not any(unit_evidence[i].numbers & reply_numbers for i in above):
        return units[max(above, key=lambda i: ranking[units[i].text])]
    ahead = [
        i
        for i in range(prose)
        if i not in holding
        and units[i].text in ranking
        and ranking[units[i].text] > best
        and not (unit_evidence[i].numbers and unit_evidence[i].numbers <= said_numbers)
    ]
    if len({units[i].text for i in ahead}) < BURIED_RANK:
        return None
    first = max(ahead, key=lambda i: ranking[units[i].text])
    # A reply that gives the first sentence's value answered the question; a further value is an addition (the
    # second season's hours, the other plan's fee), as with the same-kind rival above.
    if unit_evidence[first].numbers & reply_numbers:
        return None
    return units[first]


def outranked(
    sentence: str,
    specific: Specific,
    units: tuple[Sequence[Unit], Sequence[Evidence]],
    holding: Sequence[int],
    ranking: Mapping[str, float],
    *,
    prose: int,
    reply_numbers: frozenset[str],
    said_numbers: frozenset[str],
) -> Finding | None:
    """The grounding check's finding for a value the evidence ranks below another (see `outranking`)."""
    better = outranking(
        specific=specific,
        units=units[0],
        unit_evidence=units[1],
        holding=holding,
        ranking=ranking,
        prose=prose,
        reply_numbers=reply_numbers,
        said_numbers=said_numbers,
    )
    if better is None:
        return None
    return Finding(
        "wrong_context",
        sentence,
        f"{specific.written!r} is not what the sources give for what was asked; the sentence that answers it: "
        f"{better.full!r}",
        (specific.written,),
    )
