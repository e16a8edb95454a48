"""What kind of value a customer's question asks for (a price, a duration, a time of day), and whether a reply
gives one: a reply that states things but none of the kind asked for does not answer.

A small model that cannot find the figure often writes a neighbouring sentence of the right document instead:
asked "可以上门收车吗 多少钱" (can you collect the bike, and for how much) it answered with the late-return rule; asked "what are the visiting
hours" it answered "up to 20 minutes"; asked how long an e-mail takes to be answered, it listed the phone numbers.
Each of those sentences is in a source, so the value checks pass it. The kinds are read from how the question is
asked, in English and Chinese, and only when the asking is clear; a reply may still answer with "free", "closed",
or a "no" to a yes-or-no question about a charge.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .conflicts import negates
from .findings import Finding

_NUMERAL = r"(?:\d+(?:[.,]\d+)?|[一二两三四五六七八九十百半几]+)"

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"

# How each kind is asked. Only clear asking: "what does the fee cover" asks no price, "how long is the trail" is rare
# in support and "how long" stays a duration.
_ASKS: dict[str, re.Pattern[str]] = {
    "price": re.compile(
        r"\bhow much\b(?!\s+(?:time|longer|later|earlier|notice|data|space|weight|luggage|baggage))"
        r"|\b(?:price|prices|pricing)\b|\bcosts?\b|\bfees? (?:for|of|to)\b|\bwhat(?:'s| is| are) the [\w -]{0,30}fees?\b"
        r"|多少钱|价格|价钱|费用是多少|收费标准|怎么收费|多少费用|几块|多少元|加钱|要钱|便宜多少|贵多少|花多少",
        re.IGNORECASE,
    ),
    "duration": re.compile(
        r"\bhow long\b|\bhow many (?:days|hours|minutes|weeks|months|years|working days|business days)\b"
        r"|多久|多长时间|多少天|几天|几个工作日|多少个工作日|几个小时|多少小时|几分钟|多少分钟",
        re.IGNORECASE,
    ),
    "clock": re.compile(
        r"\bwhat time\b|\b(?:opening|business|office|visiting|visitor|service|store|shop) hours\b"
        r"|\bwhen (?:do|does|is|are|will)\b[^?.!]{0,40}\b(?:open|opens|close|closes|start|starts|depart|departs)\b"
        r"|几点|营业时间|开放时间|探视时间|探望时间|上班时间|办公时间|什么时候开门|什么时候关门",
        re.IGNORECASE,
    ),
}

_GIVES: dict[str, re.Pattern[str]] = {
    "price": re.compile(
        r"[$€£¥￥]|\b(?:usd|eur|gbp|cny|rmb|sgd|hkd|yuan|euros?|dollars?|pounds?)\b|\d\s*(?:元|块|欧|美元|英镑|新元)"
        r"|\d\s*%|[一二三四五六七八九]折|\bfree\b|\bno (?:extra )?(?:charge|cost|fee)\b|\bat no (?:extra )?cost\b"
        r"|\bincluded\b|免费|不收费|不另收费|不要钱|不用钱|不额外收费|包含在",
        re.IGNORECASE,
    ),
    "duration": re.compile(
        _NUMERAL + r"(?:\s*(?:-|–|to|至|到)\s*" + _NUMERAL + r")?\s*"
        r"(?:minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|months?|years?|working days?|business days?"
        r"|分钟|小时|个?钟头|天|日|晚|周|个?星期|个月|年|个?工作日)"
        r"|\b(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|a few|few|a couple of|several|half an?)"
        r"\s+(?:minute|hour|day|night|week|month|year|fortnight)s?\b|\bovernight\b"
        r"|\bsame day\b|\bnext day\b|\bimmediately\b|\binstantly\b|\bright away\b|当天|当日|次日|立即|马上|即时",
        re.IGNORECASE,
    ),
    "clock": re.compile(
        r"\d{1,2}[:.]\d{2}|\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}\s*(?:-|–|to|until|till)\s*\d{1,2}\b|"
        + _NUMERAL
        + r"\s*点|\bnoon\b|\bmidnight\b"
        r"|\b24 ?(?:hours|h|/7)\b|\baround the clock\b|\bclosed\b|中午|午夜|凌晨|24\s*小时|全天|不营业|休息|闭馆|关门"
        # "When do the terms start?" may be asked for a date: a date or a weekday answers it too.
        # A month counts next to a day's number only: "you may visit" is no date.
        r"|\b\d{1,2}(?:st|nd|rd|th)?\s+" + _MONTH + r"|\b" + _MONTH + r"\s+\d{1,2}\b"
        r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day"
        r"|\d\s*[月号日]|星期|周[一二三四五六日天末]",
        re.IGNORECASE,
    ),
}

# A "no" answers a yes-or-no question about a charge only when it is about paying ("不需要加钱", "no extra charge").
_CHARGE_RE = re.compile(r"\b(?:charges?|costs?|fees?|pay|paid|price)\b|费|钱|付", re.IGNORECASE)

_WHAT_KIND = {"price": "how much it costs", "duration": "how long it takes", "clock": "at what time"}


def asked_kinds(question: str) -> frozenset[str]:
    """The kinds of value `question` clearly asks for (empty when it asks none of them clearly)."""
    return frozenset(kind for kind, pattern in _ASKS.items() if pattern.search(question))


def gives_kind(text: str, kind: str) -> bool:
    return bool(_GIVES[kind].search(text))


def unanswered(asked: str, reply: str, claims: Sequence[str]) -> Finding | None:
    """A finding when the customer asked for a price, a duration or a time and the reply's statements (`claims`,
    its sentences that state something) give none of the kinds asked; None when it gives one, states nothing, or
    says no to a yes-or-no question about a charge ("不需要加钱")."""
    kinds = asked_kinds(asked)
    if not kinds or not claims:
        return None
    stated = " ".join(claims)
    if any(gives_kind(stated, kind) for kind in kinds):
        return None
    if "price" in kinds and negates(stated) and _CHARGE_RE.search(stated):
        return None
    wanted = " or ".join(_WHAT_KIND[kind] for kind in sorted(kinds))
    return Finding(
        "unanswered",
        reply[:80],
        f"the customer asked {wanted}; the reply does not say it (give the figure the sources state, or say you do "
        "not know)",
    )
