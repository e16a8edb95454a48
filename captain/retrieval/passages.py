"""What a knowledge passage stores for hybrid search: its vector (the bundled encoder, float32 bytes) and its
keyword text (lower-cased words and CJK character bigrams, so the full-text side also matches Chinese, which has no
spaces for a full-text tokenizer to split on)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .embeddings import _tokens, get_encoder

VECTOR_DIM = 512
VECTOR_DTYPE = np.float32


def search_tokens(text: str) -> str:
    """The keyword text of `text`: its tokens joined by spaces (both full-text engines split on spaces)."""
    return " ".join(_tokens(text))


def passage_text(heading: str, text: str) -> str:
    """What is embedded for a passage: the headings above it carry the topic a short paragraph leaves out."""
    return f"{heading}\n{text}" if heading else text


def embed_passages(texts: Sequence[str], *, batch: int = 64) -> list[bytes]:
    """One float32 vector (as bytes, `VECTOR_DIM` x 4) per text, unit length. Raises ImportError when the
    encoder package is missing."""
    encoder = get_encoder()
    out: list[bytes] = []
    for start in range(0, len(texts), batch):
        vectors = encoder.encode(list(texts[start : start + batch]))
        out.extend(np.ascontiguousarray(v, dtype=VECTOR_DTYPE).tobytes() for v in vectors)
    return out


def vector_from_bytes(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=VECTOR_DTYPE)
