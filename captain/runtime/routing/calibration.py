"""Per-assistant calibration of the encoder's scores: how close each of a node's texts is to a message that says
nothing at all.

A cosine similarity means little on its own: a node described in one long sentence scores 0.05-0.25 against
every customer message, a short example phrase 0.3-0.6 against anything phrased like it, and a broad triage
description sits close to everything in its domain. So every text a node is scored with (its "title:
description", each example phrase) is first measured against content-free messages ("hi", "ok", "thanks", an
order number, EN and ZH): its *prior* and *spread*. The router then compares *evidence*: a message's similarity
to a text minus that text's prior, in units of the noise (the mean spread over the texts of the decision), the
best text of a node counting for the node. Nodes described in different ways (a title and a description only,
or dozens of examples) thereby compete on equal terms, and adding or removing examples shifts evidence smoothly
instead of moving every score across a fixed threshold.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from threading import Lock

import numpy as np

from .scoring import Encoder

# Messages that carry no topic, EN and ZH: greetings, acknowledgements, bare numbers, vague openers.
# fmt: off
CONTENT_FREE: tuple[str, ...] = (
    "hi", "hello there", "good morning", "ok", "okay thanks", "thank you", "yes", "no",
    "I have a question", "can you help me?", "one more thing", "sure, go ahead", "12345", "what do you mean?",
    "你好", "在吗", "好的", "谢谢", "是的", "我有个问题", "还有一件事", "什么意思？",
)
# fmt: on

TOP_TEXTS = 2
"""A node's evidence is the mean over its best two texts (its only one when it has one): a single example
phrase that happens to resemble the message cannot carry a node alone, while a node whose description and
examples agree gets the full weight. Best text alone: 68.0% mean free-running on the development files, and
accepted corrections often lowered accuracy; two: 68.9%, corrections raise it on files with examples; three:
67.6%."""

MIN_NOISE = 0.02
"""Lower bound of the noise unit, so that texts which all score alike on content-free messages do not turn tiny
differences into large margins."""


@dataclass(frozen=True)
class Evidence:
    raw: dict[str, float]
    """Node -> cosine similarity of the message with its closest text (-1.0: a node without texts)."""
    evidence: dict[str, float]
    """Node -> mean (similarity - prior) / noise over its best `TOP_TEXTS` texts (-inf: a node without
    texts)."""
    noise: float


class Calibrator:
    """Text -> (prior, spread), measured once per distinct text (an LRU of them): a conversation pays for an
    assistant's texts once, and an edited scenario is measured again because its text changed."""

    def __init__(self, probes: Sequence[str] = CONTENT_FREE, size: int = 8192) -> None:
        self.probes = tuple(probes)
        # Keyed by encoder as well: a text's prior belongs to the encoder that measured it (one per process in
        # the product; tests and benchmarks may hold several).
        self._texts: OrderedDict[tuple[int, str], tuple[float, float]] = OrderedDict()
        self._size = size
        self._lock = Lock()

    def priors(self, encoder: Encoder, texts: Sequence[str]) -> list[tuple[float, float]]:
        owner = id(encoder)
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if (owner, t) not in self._texts]
        if missing:
            vectors = encoder.encode([*self.probes, *missing])
            sims = vectors[: len(self.probes)] @ vectors[len(self.probes) :].T
            with self._lock:
                for j, text in enumerate(missing):
                    self._texts[(owner, text)] = (float(sims[:, j].mean()), float(sims[:, j].std()))
        with self._lock:
            found = []
            for text in texts:
                found.append(self._texts[(owner, text)])
                self._texts.move_to_end((owner, text))
            while len(self._texts) > self._size:
                self._texts.popitem(last=False)
            return found

    @staticmethod
    def noise_of(priors: Sequence[tuple[float, float]]) -> float:
        """The noise unit of a decision: the mean spread of its texts, at least `MIN_NOISE`."""
        return max(float(np.mean([spread for _, spread in priors])), MIN_NOISE)

    def measure(
        self, encoder: Encoder, documents: Mapping[str, tuple[str, ...]], message: str, keys: Sequence[str]
    ) -> Evidence:
        """Evidence of `message` for each of `keys`, whose texts are `documents[key]`. One encoder call for the
        message and the texts (the encoder caches texts it has seen)."""
        texts: list[str] = []
        owner: list[str] = []
        for key in keys:
            for text in documents[key]:
                texts.append(text)
                owner.append(key)
        raw = dict.fromkeys(keys, -1.0)
        evidence = dict.fromkeys(keys, float("-inf"))
        if not texts:
            return Evidence(raw, evidence, MIN_NOISE)
        priors = self.priors(encoder, texts)
        noise = self.noise_of(priors)
        vectors = encoder.encode([message, *texts])
        sims = vectors[1:] @ vectors[0]
        per: dict[str, list[float]] = {}
        for key, sim, (prior, _) in zip(owner, sims, priors, strict=True):
            raw[key] = max(raw[key], float(sim))
            per.setdefault(key, []).append((float(sim) - prior) / noise)
        for key, values in per.items():
            values.sort(reverse=True)
            top = values[:TOP_TEXTS]
            evidence[key] = sum(top) / len(top)
        return Evidence(raw, evidence, noise)


CALIBRATOR = Calibrator()
"""One per process: priors depend only on the texts and the encoder (one bundled encoder per process)."""
