"""The deterministic grounding check: the checkable specifics of a reply (numbers, prices, currencies, dates, times,
durations, e-mail addresses, links) must appear in the evidence: the sources put before the model, the
conversation, or the builder's instructions. No model call: it runs on every reply, and a reply that passes
costs nothing extra.

Numbers are compared by value after normalising their spelling ("1,000" = "1000", "49.90" = "49.9", "09:00" has
the numbers 9 and 0); a number written in the evidence as part of a larger one (the 9 of "9:00-18:00") counts.
Not checked (known limits): numbers spelled in words ("thirty", "三十"), names and other non-numeric claims.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_URL_RE = re.compile(r"(?:https?://|www\.)[^\s<>()\"'\]\[，。！？、]+", re.IGNORECASE)
_EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A number with its internal separators: 1,299.00 / 9:30 / 2025-03-01 / 4.5
_NUMBER_RE = re.compile(r"\d+(?:[.,:/\-]\d+)*")
# A list marker at the start of a line ("1." "2)") is structure, not a claim.
_LIST_MARKER_RE = re.compile(r"^\s*\d{1,2}[.)]\s", re.MULTILINE)
_CITATION_RE = re.compile(r"\[\d{1,2}\]")
# Currency marks whose presence is itself a claim ("prices in dollars" when the company charges euros).
_CURRENCIES = {
    "$": "usd",
    "usd": "usd",
    "dollar": "usd",
    "美元": "usd",
    "€": "eur",
    "eur": "eur",
    "euro": "eur",
    "欧元": "eur",
    "£": "gbp",
    "gbp": "gbp",
    "pound": "gbp",
    "英镑": "gbp",
    "¥": "cny",
    "cny": "cny",
    "rmb": "cny",
    "yuan": "cny",
    "元": "cny",
    "人民币": "cny",
}
_CURRENCY_RE = re.compile(
    "|".join(
        re.escape(k) if not k.isascii() or not k.isalpha() else rf"\b{k}s?\b"
        for k in sorted(_CURRENCIES, key=len, reverse=True)
    ),
    re.IGNORECASE,
)


def _strip_url(url: str) -> str:
    return url.rstrip(".,;:!?").lower().removeprefix("https://").removeprefix("http://").removeprefix("www.")


def _number_values(token: str) -> set[str]:
    """The numbers a token stands for: the whole (separators normalised) and each of its parts."""
    values: set[str] = set()
    parts = re.split(r"[.,:/\-]", token)
    for part in parts:
        values.add(str(int(part)))
    # A 24-hour time in the evidence ("18:00") supports the same hour written the 12-hour way ("6 pm").
    if ":" in token:
        values |= {str(int(part) - 12) for part in parts if part and 12 < int(part) <= 24}
    # Thousands separators: "1,000" and "1,299.00" are one number.
    plain = re.sub(r",(?=\d{3}(?:\D|$))", "", token)
    if re.fullmatch(r"\d+(?:\.\d+)?", plain):
        value = float(plain)
        values.add(f"{value:g}" if value < 1e15 else plain)
    return values


def _reply_numbers(text: str) -> list[tuple[str, set[str]]]:
    """(as written, acceptable values) for each number of the reply. The whole token must be found, or else all its
    parts (a date or a time written differently from the evidence)."""
    out = []
    for token in _NUMBER_RE.findall(text):
        token = token.strip(".,:/-")
        if not token:
            continue
        plain = re.sub(r",(?=\d{3}(?:\D|$))", "", token)
        if re.fullmatch(r"\d+(?:\.\d+)?", plain):
            value = float(plain)
            out.append((token, {f"{value:g}" if value < 1e15 else plain}))
        else:
            out.append((token, {str(int(p)) for p in re.split(r"[.,:/\-]", token) if p}))
    return out


@dataclass(frozen=True)
class Evidence:
    """Everything a reply may take its specifics from, indexed once per turn."""

    numbers: frozenset[str]
    emails: frozenset[str]
    urls: frozenset[str]
    currencies: frozenset[str]

    @classmethod
    def of(cls, texts: Iterable[str]) -> Evidence:
        numbers: set[str] = set()
        emails: set[str] = set()
        urls: set[str] = set()
        currencies: set[str] = set()
        for text in texts:
            if not text:
                continue
            for email in _EMAIL_RE.findall(text):
                emails.add(email.lower())
            for url in _URL_RE.findall(text):
                urls.add(_strip_url(url))
            for token in _NUMBER_RE.findall(text):
                token = token.strip(".,:/-")
                if token:
                    numbers |= _number_values(token)
            for mark in _CURRENCY_RE.findall(text):
                currencies.add(_CURRENCIES[mark.lower().rstrip("s") if mark.isascii() else mark])
        return cls(frozenset(numbers), frozenset(emails), frozenset(urls), frozenset(currencies))

    @classmethod
    def joined(cls, parts: Iterable[Evidence]) -> Evidence:
        """What the parts' texts allow together (`of` over all their texts gives the same)."""
        parts = list(parts)
        return cls(
            frozenset().union(*(p.numbers for p in parts)),
            frozenset().union(*(p.emails for p in parts)),
            frozenset().union(*(p.urls for p in parts)),
            frozenset().union(*(p.currencies for p in parts)),
        )


@dataclass(frozen=True)
class Specific:
    """One checkable specific of a reply, as written, and what it must match in the evidence."""

    written: str
    kind: str
    """number | email | url | currency"""
    values: frozenset[str]

    def in_evidence(self, evidence: Evidence) -> bool:
        if self.kind == "email":
            return self.written.lower() in evidence.emails
        if self.kind == "url":
            stripped = _strip_url(self.written)
            # A known link, or a shortened form of one (the site's home), is fine; any other path may not exist.
            return any(stripped == known or known.startswith(stripped) for known in evidence.urls)
        if self.kind == "number":
            return self.values <= evidence.numbers
        return self.values <= evidence.currencies


def without_list_markers(text: str) -> str:
    """`text` without the numbers of its numbered lines ("1. Switch it off."): structure, not claims. Cut into
    sentences first, a marker would end the sentence before it ("To reset: 1.") and read as a value."""
    return _LIST_MARKER_RE.sub(" ", text)


def specifics(reply: str) -> list[Specific]:
    """The checkable specifics of `reply` in order (list markers and citation markers are structure, not claims)."""
    out: list[Specific] = []
    text = _CITATION_RE.sub(" ", _LIST_MARKER_RE.sub(" ", reply))
    for email in _EMAIL_RE.findall(text):
        out.append(Specific(email, "email", frozenset({email.lower()})))
    text = _EMAIL_RE.sub(" ", text)
    for url in _URL_RE.findall(text):
        out.append(Specific(url.rstrip(".,;:!?"), "url", frozenset({_strip_url(url)})))
    text = _URL_RE.sub(" ", text)
    for token, values in _reply_numbers(text):
        out.append(Specific(token, "number", frozenset(values)))
    for mark in _CURRENCY_RE.findall(text):
        code = _CURRENCIES[mark.lower().rstrip("s") if mark.isascii() else mark]
        out.append(Specific(mark, "currency", frozenset({code})))
    return out


def states(evidence: Evidence, kind: str) -> bool:
    """Whether `evidence` states any value of a specific's kind (a number, an e-mail, a link)."""
    if kind == "number":
        return bool(evidence.numbers)
    if kind == "email":
        return bool(evidence.emails)
    return bool(evidence.urls)


def unsupported_facts(reply: str, evidence: Evidence) -> list[str]:
    """The specifics of `reply` that the evidence does not contain, as written in the reply (empty: grounded)."""
    return list(dict.fromkeys(s.written for s in specifics(reply) if not s.in_evidence(evidence)))


_QUOTED_RE = re.compile(
    r'"([^"\n]{2,60})"|\u201c([^\u201d\n]{2,60})\u201d|\u300c([^\u300d\n]{2,60})\u300d|\u300e([^\u300f\n]{2,60})\u300f'
)
_SPACE_RE = re.compile(r"\s+")


def quoted(text: str) -> list[str]:
    """What a reply puts in double quotes (ASCII, curly or CJK corner brackets): a password, a plan's or a
    button's name, a code. Quoting says "exactly this", so it must be written somewhere exactly."""
    return [next(g for g in m.groups() if g) for m in _QUOTED_RE.finditer(text)]


def squashed(text: str) -> str:
    """Lower case, whitespace runs as one space: how a quoted literal is looked up."""
    return _SPACE_RE.sub(" ", text).lower()
