"""Whether a word is everyday language: common in English or Chinese at large, whatever a help centre says.

The grounding check reads a question's words that few of the help centre's passages hold as the thing the customer
named (`conflicts.named_words`): "rabies" at a vet clinic, "dishwasher" in an appliance shop. But a word can be rare
in one help centre only because that help centre never needed it: "address", "whole", "putting", "summer". Such a
word is how people talk about anything, so a source may well say the same thing in other words ("Where is the
service centre?" for the address, "6 July" for the summer term), and a value from a sentence that does not repeat it
is not for that reason about something else. A word rare in the language itself names one thing, and a source about
that thing says it.

Rarity in the language is read from `wordfreq` (word frequencies of many corpora: Wikipedia, subtitles, news, books,
the web; Chinese segmented with its own jieba dictionary), its "small" lists: the words above about one in a million,
which hold every word this threshold can call everyday (27 MB with both languages, loaded once per process, about
0.2 s). A word the lists do not hold is rare. No list of a help centre's words is written here.
"""

from __future__ import annotations

from functools import lru_cache

from .tokens import has_cjk

EVERYDAY_ZIPF = 4.5
"""Zipf frequency (log10 of occurrences per billion words) from which a word is everyday: 4.5 is about 30 per
million words ("chocolate" 4.5, "address" 4.9, "whole" 5.5; "certificate" 4.3, "locker" 4.0, "rabies" 3.2; "地址"
4.8, "狂犬" 2.9)."""


@lru_cache(maxsize=4096)
def zipf(word: str) -> float:
    """The word's Zipf frequency in its language (Chinese when it has CJK characters, English otherwise)."""
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, "zh" if has_cjk(word) else "en", wordlist="small"))


def is_everyday(word: str, *, threshold: float = EVERYDAY_ZIPF) -> bool:
    return zipf(word) >= threshold
