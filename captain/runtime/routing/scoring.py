"""The sentence encoder the router compares messages with (`calibration` turns its similarities into evidence)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Encoder(Protocol):
    """Sentence encoder: texts -> L2-normalised rows (captain.knowledge.services.retrieval.TextEncoder fits; tests use a fake)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...
