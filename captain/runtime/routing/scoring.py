"""Encoder scores: how close the customer's message is to each node's documents (best document wins)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from .view import RoutingView


class Encoder(Protocol):
    """Sentence encoder: texts -> L2-normalised rows (captain.knowledge.services.retrieval.TextEncoder fits; tests use a fake)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def scores(encoder: Encoder, view: RoutingView, message: str, keys: Sequence[str]) -> dict[str, float]:
    """Cosine similarity of `message` with the best document of each of `keys` (-1.0 for a node without
    documents), in the order of `keys`. One encoder call for the message and every document."""
    docs: list[str] = []
    owner: list[str] = []
    for key in keys:
        for doc in view.documents[key]:
            docs.append(doc)
            owner.append(key)
    result = dict.fromkeys(keys, -1.0)
    if not docs:
        return result
    vectors = encoder.encode([message, *docs])
    sims = vectors[1:] @ vectors[0]
    for key, sim in zip(owner, sims, strict=True):
        result[key] = max(result[key], float(sim))
    return result
