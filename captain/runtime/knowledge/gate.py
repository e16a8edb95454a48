"""What happens to a message when the knowledge has nothing for it. Small talk ("hi", "thanks", "I want a person")
goes to the model, which needs no facts to answer it; a question about the company that nothing answers gets "I do
not know" (or people); anything else is outside the assistant's scope and gets a polite refusal instead of an
answer from the model's general knowledge.

Scope is measured with the same encoder as retrieval: how close the message is to anything in the knowledge (the
best retrieval score, threshold or not) or to what the builder says the assistant is for (its description,
product name and scenario descriptions)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

Encode = Callable[[list[str]], np.ndarray]


class GateVerdict(enum.Enum):
    SMALLTALK = "smalltalk"
    IN_SCOPE = "in_scope"
    OFF_TOPIC = "off_topic"


class Gate(Protocol):
    def classify(self, message: str, *, best_knowledge_score: float) -> tuple[GateVerdict, float]:
        """The verdict and the score it rests on (shown in the debug log)."""
        ...


# Messages that need no company facts to answer, EN and ZH: greetings, thanks, asking for a person, complaints.
# Short on purpose: a message close to one of these is small talk whatever else it says.
# fmt: off
SMALLTALK_PROTOTYPES: tuple[str, ...] = (
    "hi", "hello", "hey there", "good morning", "good evening", "how are you",
    "thanks", "thank you very much", "great, thanks for your help", "ok", "okay got it", "bye", "goodbye",
    "yes please", "no thanks", "that's all",
    "I want to talk to a human", "can I speak to a real person", "connect me to an agent",
    "你好", "您好", "早上好", "谢谢", "非常感谢", "好的", "再见", "没有了", "是的", "不用了",
    "转人工", "我要找人工客服", "请帮我转接真人", "在吗",
    # Complaints and escalations: the model's handoff tool answers them, not "I do not know".
    "I want to speak to a manager", "this is unacceptable", "I want to make a complaint", "I am very angry",
    "我要投诉", "让你们经理来", "太过分了",
)
# fmt: on


@dataclass
class TopicGate:
    """Gate over the bundled encoder. Thresholds come from `captain_bench_knowledge` (docs/knowledge.md)."""

    encode: Encode
    scope_texts: Sequence[str]
    """What the assistant is for: its description, product name, scenario descriptions."""
    smalltalk_threshold: float = 0.55
    scope_threshold: float = 0.30
    """In scope when the best knowledge score or the closest scope text reaches this."""
    prototypes: Sequence[str] = field(default=SMALLTALK_PROTOTYPES)

    def classify(self, message: str, *, best_knowledge_score: float) -> tuple[GateVerdict, float]:
        texts = [t for t in self.scope_texts if t.strip()]
        vectors = self.encode([message, *self.prototypes, *texts])
        query, rest = vectors[0], vectors[1:]
        smalltalk = float(np.max(rest[: len(self.prototypes)] @ query))
        if smalltalk >= self.smalltalk_threshold:
            return GateVerdict.SMALLTALK, smalltalk
        scope = float(np.max(rest[len(self.prototypes) :] @ query)) if texts else 0.0
        best = max(scope, best_knowledge_score)
        return (GateVerdict.IN_SCOPE if best >= self.scope_threshold else GateVerdict.OFF_TOPIC), best
