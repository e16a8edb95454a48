"""In-memory vector side of hybrid search, and rank fusion (no Django).

A `VectorIndex` is one float32 matrix with a row per embedded text; several rows may belong to one passage (an
FAQ entry is embedded as its question and as question + answer) and a passage scores as its best row. One
matrix-vector product per query: 10,000 rows x 512 dims is ~5 M multiply-adds, about a millisecond here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RRF_K = 60
"""Reciprocal rank fusion constant (the usual 60: later ranks still count, the top ones count most)."""


class VectorIndex:
    def __init__(self, matrix: np.ndarray, owners: np.ndarray, passages: int) -> None:
        if matrix.shape[0] != owners.shape[0]:
            raise ValueError("one owner per row")
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self.owners = owners.astype(np.int64)
        self.passages = passages
        # Rows are grouped by owner when every passage has one row (documents): skip the scatter then.
        self._one_row_each = bool(passages == matrix.shape[0] and np.all(self.owners == np.arange(passages)))

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes + self.owners.nbytes)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine score of every passage (rows and query are unit length), -1 for a passage with no rows."""
        if self.matrix.shape[0] == 0:
            return np.full(self.passages, -1.0, dtype=np.float32)
        rows = self.matrix @ query.astype(np.float32)
        if self._one_row_each:
            return rows
        out = np.full(self.passages, -1.0, dtype=np.float32)
        np.maximum.at(out, self.owners, rows)
        return out


def rank_of(order: Sequence[int]) -> dict[int, int]:
    """Passage -> 0-based rank in `order`."""
    return {passage: rank for rank, passage in enumerate(order)}


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], *, k: int = RRF_K) -> dict[int, float]:
    """Passage -> fused score: the sum over rankings of 1 / (k + rank + 1). Scores of different kinds (cosines,
    bm25) cannot be added; ranks can."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, passage in enumerate(ranking):
            fused[passage] = fused.get(passage, 0.0) + 1.0 / (k + rank + 1)
    return fused
