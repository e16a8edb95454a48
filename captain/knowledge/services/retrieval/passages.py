"""What a knowledge passage stores for hybrid search: its vector (the bundled encoder, float32 bytes) and its
keyword text (lower-cased words and CJK character bigrams, so the full-text side also matches Chinese, which has no
spaces for a full-text tokenizer to split on)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from captain.knowledge.services.retrieval.embeddings import get_encoder
from captain.runtime.knowledge.tokens import tokens

VECTOR_DIM = 512
VECTOR_DTYPE = np.float32


def search_tokens(text: str) -> str:
    """The keyword text of `text`: its tokens joined by spaces (both full-text engines split on spaces)."""
    return " ".join(tokens(text))


def passage_text(heading: str, text: str) -> str:
    """What is embedded for a passage: the headings above it carry the topic a short paragraph leaves out."""
    return f"{heading}\n{text}" if heading else text


# Sentence ends in English and Chinese; a view is a run of sentences up to VIEW_CHARS.
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s+|(?<=[。！？；])|\n+")
VIEW_CHARS = 220
MAX_VIEWS = 8


def passage_views(text: str) -> list[str]:
    """What is embedded for one passage: the whole passage, then its sentences grouped into short views, each
    with the passage's first line (its headings) in front.

    The encoder compares sentence-sized texts best: a question about one detail of a long passage matches the
    sentence that states it far better than the passage's single averaged vector (measured with
    `python -m bench.knowledge --retrieval`)."""
    head, _, body = text.partition("\n")
    if not body.strip():
        return [text]
    views: list[str] = []
    current = ""
    for sentence in (s.strip() for s in _SENTENCE_END.split(body)):
        if not sentence:
            continue
        if current and len(current) + len(sentence) > VIEW_CHARS:
            views.append(current)
            current = ""
        current = f"{current} {sentence}".strip()
    if current:
        views.append(current)
    if len(views) <= 1:
        return [text]
    return [text, *(f"{head}: {view}" for view in views[:MAX_VIEWS])]


def embed_passages(texts: Sequence[str], *, batch: int = 64) -> list[bytes]:
    """Per text, its views' float32 unit vectors (`passage_views`) as one byte string (k x `VECTOR_DIM` x 4).
    Raises ImportError when the encoder package is missing."""
    encoder = get_encoder()
    views = [passage_views(t) for t in texts]
    flat = [v for group in views for v in group]
    vectors = np.zeros((0, VECTOR_DIM), dtype=VECTOR_DTYPE)
    parts = [encoder.encode(flat[start : start + batch]) for start in range(0, len(flat), batch)]
    if parts:
        vectors = np.vstack(parts).astype(VECTOR_DTYPE)
    out: list[bytes] = []
    at = 0
    for group in views:
        out.append(np.ascontiguousarray(vectors[at : at + len(group)]).tobytes())
        at += len(group)
    return out


def vectors_from_bytes(data: bytes) -> np.ndarray:
    """The (k, VECTOR_DIM) vectors of one stored passage."""
    return np.frombuffer(data, dtype=VECTOR_DTYPE).reshape(-1, VECTOR_DIM)
