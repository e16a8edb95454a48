"""Chinese words for the checks that need words rather than character pairs, segmented by jieba (the common
dictionary-based segmenter; its dictionary loads once per process, about 0.7 s, on the first Chinese question
that needs it).

Character pairs (`tokens`) are enough to find passages, but not to tell what a question is about: "学生办潮汐卡有没有
额外的折扣" has the pairs "生办" and "办潮", which no help centre contains and no reader would call a topic.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

import jieba

jieba.setLogLevel(logging.WARNING)  # it announces loading its dictionary on stderr otherwise

_HAN_RE = re.compile(r"[\u4e00-\u9fff]{2,}")
# Words a question is asked with, not what it is about.
# fmt: off
ASKING_WORDS = frozenset((
    "可以", "有没有", "有没", "还是", "你们", "我们", "多少", "什么", "怎么", "是否", "能否", "需要", "能不能",
    "可不可以", "是不是", "一下", "请问", "现在", "这个", "那个", "的话",
))
# fmt: on


def warm() -> None:
    """Load the dictionary now (a worker starting), not in the first customer's reply that needs it."""
    jieba.initialize()


def words(text: str) -> Iterator[str]:
    """The words of two or more Han characters in `text`, in order, without the asking words."""
    for word in jieba.lcut(text):
        if _HAN_RE.fullmatch(word) and word not in ASKING_WORDS:
            yield word


def unknown_words(asked: str, sentence: str, known: frozenset[str]) -> list[str]:
    """The question's Chinese words that `sentence` repeats and no known text holds: a word is known when each of
    its character pairs is (the pairs are what retrieval and the sources' vocabulary count)."""
    return [
        w
        for w in dict.fromkeys(words(asked))
        if w in sentence and any(w[i : i + 2] not in known for i in range(len(w) - 1))
    ]
