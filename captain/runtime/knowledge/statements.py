"""Which sentences of a reply state something about the company (and so need a source), and which words of a
question only say what is asked, not what it is about."""

from __future__ import annotations

import re

from .tokens import has_cjk, tokens

_NAME_RE = re.compile(r"(?<=\S\s)([A-Z][A-Za-z]+)")

# Sentences that state nothing about the company: courtesy, offers of a person, "I do not know". EN and ZH.
_NOT_A_CLAIM_RE = re.compile(
    r"\b(let me know|anything else|happy to help|glad to help|hope (this|that) helps|feel free|sorry|hello|hi|"
    r"hey|not sure|don'?t (know|have)|do not (know|have)|no information|(connect|transfer|put) you|"
    r"member of (our|the) team|a person|human|agent)\b|\b(thank|apolog|welcom|colleague)"
    r"|如有|还有什么|很高兴|感谢|谢谢|抱歉|不好意思|您好|你好|人工|同事|不确定|不清楚|没有找到|欢迎",
    re.IGNORECASE,
)
# Words of a question that say what is asked, not what it is about: never "the thing no source mentions".
# fmt: off
GENERIC_WORDS = frozenset((
    "much", "many", "cost", "price", "does", "need", "want", "please", "tell", "know", "about", "also", "would",
    "could", "should", "like", "long", "time", "next", "just", "still", "really", "thank", "hello", "there",
    "their", "them", "they", "then", "than", "will", "every", "each", "your", "yours", "ours", "mine", "here", "some",
))
# fmt: on


def is_claim(sentence: str) -> bool:
    """Whether a reply sentence states something about the company (not a greeting, an offer or a question)."""
    text = sentence.strip()
    if not text or text.endswith(("?", "？")) or _NOT_A_CLAIM_RE.search(text):
        return False
    return len(tokens(text)) >= 3


def absent_names(question: str, sentence: str, vocabulary: frozenset[str], *, latin: bool) -> list[str]:
    """What the customer asked about, repeated by the reply, that no source mentions at all ("the Wuzhen day trip
    costs ..." when no source knows a Wuzhen trip): a value stated about it cannot be from the sources.
    `vocabulary`: every word of the sources; `latin`: whether the sources hold Latin words at all."""
    said = set(tokens(sentence))
    absent = [
        w
        for w in dict.fromkeys(tokens(question))
        if w in said and w not in vocabulary and not w.isdigit() and w not in GENERIC_WORDS
    ]
    # A Latin word counts when the reply writes it as a name (capitalised after the sentence's first word):
    # "the Wuzhen Day Trip", not "for booking 88412".
    names = {m.lower() for m in _NAME_RE.findall(sentence)}
    # Chinese has no capitals to mark a name, and a reply repeats and rephrases the question's words freely
    # ("明天有事想请假"; measured with bench.replay_knowledge: more right replies refused than wrong ones):
    # only Latin names are checked this way.
    return [w for w in absent if not has_cjk(w) and w in names and len(w) >= 3 and latin]
