"""Hybrid search over an assistant's knowledge: approved FAQ entries and document chunks.

- Vector side: the bundled multilingual encoder. Chunk vectors are stored with the chunk; FAQ entries are embedded
  as their question and as question + answer (a passage scores as its best text). The vectors of an assistant are
  kept in memory (`VectorIndex`), reloaded only when its knowledge changed: a version (counts and newest ids and
  edit times) is read with each query, two indexed aggregates.
- Keyword side: SQLite FTS5 (bm25) or PostgreSQL full-text (ts_rank) over the chunks' keyword text (words and CJK
  bigrams), and the same tokens scored in memory over the few FAQ entries.
- The two rankings are fused by reciprocal rank; a passage is kept when its vector score clears the relevance
  threshold of its kind, or when it is a top keyword hit with a lower vector score (`RetrievalThresholds`).

A follow-up (a short message) is also searched together with the customer's previous turn.
Memory: 2 KiB per chunk (512 float32) plus 4 KiB per FAQ entry, for at most `KNOWLEDGE_INDEX_CACHE_ASSISTANTS`
assistants per process (least recently used dropped first).
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.db.models import Count, Max

from captain.assistants.models import Assistant
from captain.conf import captain_setting
from captain.knowledge.models import FaqEntry, KnowledgeChunk
from captain.knowledge.services.rerank import RerankSettings, TermStats, query_terms, rerank
from captain.knowledge.services.retrieval import get_encoder
from captain.knowledge.services.retrieval.index import VectorIndex, rank_of, reciprocal_rank_fusion
from captain.knowledge.services.retrieval.passages import VECTOR_DIM, vectors_from_bytes
from captain.runtime.knowledge import Retrieval, Source, tokens

KEYWORD_CANDIDATES = 30
VECTOR_CANDIDATES = 30
FOLLOW_UP_MAX_TOKENS = 8
"""A message this short is probably a follow-up ("and for kids?"): it is searched with the previous turn too."""


@dataclass(frozen=True)
class RetrievalThresholds:
    """Relevance thresholds on the vector score (cosine), measured with `python -m bench.knowledge --retrieval`."""

    faq: float = 0.45
    chunk: float = 0.30
    keyword_backed: float = 0.35
    """A top-3 keyword hit is kept from this vector score up."""

    @classmethod
    def from_settings(cls) -> RetrievalThresholds:
        return cls(**(captain_setting("KNOWLEDGE_THRESHOLDS") or {}))


@dataclass
class _Loaded:
    version: tuple[object, ...]
    sources: list[Source]
    chunk_ids: dict[int, int]
    """Chunk id -> passage index."""
    faq_tokens: list[Counter[str]]
    """Keyword tokens of each FAQ passage (FAQ passages come first)."""
    index: VectorIndex
    terms: TermStats
    """Keyword document frequencies over all passages (the rerank's IDF)."""


_cache: OrderedDict[tuple[int, int], _Loaded] = OrderedDict()
"""(assistant id, account id) -> its loaded index."""
_cache_lock = threading.Lock()


def _version(assistant_id: int, account_id: int) -> tuple[object, ...]:
    # Filtered on the assistant alone so the (assistant, document) index answers it without reading the rows
    # (10,000 chunks: 0.2 ms instead of 10 ms). It only detects a change: the load itself filters on both.
    chunks = KnowledgeChunk.objects.filter(assistant_id=assistant_id).aggregate(n=Count("id"), last=Max("id"))
    faqs = FaqEntry.objects.filter(
        assistant_id=assistant_id, account_id=account_id, status=FaqEntry.Status.APPROVED, enabled=True
    ).aggregate(n=Count("id"), last=Max("updated_at"), newest=Max("id"))
    return (chunks["n"], chunks["last"], faqs["n"], faqs["last"], faqs["newest"])


def _load(assistant_id: int, account_id: int, version: tuple[object, ...]) -> _Loaded:
    sources: list[Source] = []
    texts: list[str] = []
    owners: list[int] = []
    faq_tokens: list[Counter[str]] = []
    entries = FaqEntry.objects.filter(
        assistant_id=assistant_id, account_id=account_id, status=FaqEntry.Status.APPROVED, enabled=True
    ).values_list("id", "question", "answer")
    for entry_id, question, answer in entries:
        index = len(sources)
        sources.append(Source(kind="faq", ref=f"faq:{entry_id}", title=question, text=answer))
        texts += [question, f"{question}\n{answer}"]
        owners += [index, index]
        faq_tokens.append(Counter(tokens(f"{question} {answer}")))
    faq_vectors = get_encoder().encode(texts) if texts else np.zeros((0, VECTOR_DIM), dtype=np.float32)
    rows = KnowledgeChunk.objects.filter(assistant_id=assistant_id, account_id=account_id).values_list(
        "id", "document__title", "heading", "text", "url", "embedding"
    )
    chunk_ids: dict[int, int] = {}
    chunk_vectors: list[np.ndarray] = []
    passage_tokens: list[list[str]] = [list(t) for t in faq_tokens]
    for chunk_id, title, heading, text, url, embedding in rows.iterator(chunk_size=2000):
        chunk_ids[chunk_id] = len(sources)
        views = vectors_from_bytes(bytes(embedding))
        owners += [len(sources)] * len(views)
        label = " > ".join(part for part in (title, heading) if part)
        sources.append(
            Source(kind="document", ref=f"chunk:{chunk_id}", title=label, text=text, url=url or "")
        )
        chunk_vectors.append(views)
        passage_tokens.append(tokens(f"{label}\n{text}"))
    matrix = np.vstack([faq_vectors, *chunk_vectors]) if chunk_vectors else faq_vectors
    vectors = VectorIndex(matrix.astype(np.float32), np.asarray(owners, dtype=np.int64), len(sources))
    return _Loaded(version, sources, chunk_ids, faq_tokens, vectors, TermStats.of(passage_tokens))


def _loaded(assistant_id: int, account_id: int) -> _Loaded:
    key = (assistant_id, account_id)
    version = _version(assistant_id, account_id)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit.version == version:
            _cache.move_to_end(key)
            return hit
    # Built outside the lock: another assistant's queries need not wait for this load.
    fresh = _load(assistant_id, account_id, version)
    with _cache_lock:
        _cache[key] = fresh
        _cache.move_to_end(key)
        while len(_cache) > int(captain_setting("KNOWLEDGE_INDEX_CACHE_ASSISTANTS")):
            _cache.popitem(last=False)
    return fresh


def _chunk_keyword_ranking(assistant_id: int, account_id: int, words: list[str]) -> list[int]:
    """Chunk ids, best keyword match first, from the database's full-text index."""
    terms = sorted(set(words))[:64]
    if not terms:
        return []
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT c.id FROM captain_knowledgechunk_fts f JOIN captain_knowledgechunk c ON c.id = f.rowid "
                "WHERE captain_knowledgechunk_fts MATCH %s AND c.assistant_id = %s AND c.account_id = %s "
                "ORDER BY bm25(captain_knowledgechunk_fts) LIMIT %s",
                [" OR ".join(f'"{t}"' for t in terms), assistant_id, account_id, KEYWORD_CANDIDATES],
            )
        elif connection.vendor == "postgresql":
            cursor.execute(
                "SELECT id FROM captain_knowledgechunk, to_tsquery('simple', %s) q "
                "WHERE assistant_id = %s AND account_id = %s AND to_tsvector('simple', search_text) @@ q "
                "ORDER BY ts_rank(to_tsvector('simple', search_text), q) DESC LIMIT %s",
                [" | ".join(f"'{t}'" for t in terms), assistant_id, account_id, KEYWORD_CANDIDATES],
            )
        else:  # pragma: no cover - the product supports SQLite and PostgreSQL
            return []
        return [row[0] for row in cursor.fetchall()]


def _faq_keyword_ranking(loaded: _Loaded, words: list[str]) -> list[int]:
    """FAQ passages by BM25 over their tokens (a few hundred entries at most: scored in memory)."""
    docs = loaded.faq_tokens
    if not docs or not words:
        return []
    n = len(docs)
    avg = sum(sum(d.values()) for d in docs) / n or 1.0
    query = set(words)
    df = {t: sum(1 for d in docs if t in d) for t in query}
    scored = []
    for i, doc in enumerate(docs):
        length = sum(doc.values())
        score = 0.0
        for term in query:
            tf = doc.get(term, 0)
            if tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))
        if score > 0:
            scored.append((score, i))
    scored.sort(reverse=True)
    return [i for _, i in scored[:KEYWORD_CANDIDATES]]


def has_knowledge(assistant: Assistant) -> bool:
    """Whether the assistant has anything to retrieve: an approved, enabled FAQ entry or a document chunk."""
    return (
        FaqEntry.objects.filter(assistant=assistant, status=FaqEntry.Status.APPROVED, enabled=True).exists()
        or KnowledgeChunk.objects.filter(assistant=assistant).exists()
    )


class AssistantKnowledge:
    """The `KnowledgeBase` of one assistant (captain.runtime.knowledge), scoped to its account."""

    def __init__(
        self, *, assistant_id: int, account_id: int, thresholds: RetrievalThresholds | None = None
    ) -> None:
        self.assistant_id = assistant_id
        self.account_id = account_id
        self.thresholds = thresholds or RetrievalThresholds.from_settings()
        self.rerank = RerankSettings.from_settings()

    def retrieve(self, query: str, *, context: str = "", limit: int = 4) -> Retrieval:
        started = time.monotonic()
        loaded = _loaded(self.assistant_id, self.account_id)
        if not loaded.sources or not query.strip():
            return Retrieval(query=query, latency_ms=(time.monotonic() - started) * 1000)
        words = tokens(query)
        texts = [query]
        if context and len(words) <= FOLLOW_UP_MAX_TOKENS:
            texts.append(f"{context}\n{query}")
            words = [*words, *tokens(context)]
        vectors = get_encoder().encode(texts)
        vector_scores = np.max(np.vstack([loaded.index.scores(v) for v in vectors]), axis=0)
        by_vector = [int(i) for i in np.argsort(-vector_scores, kind="stable")[:VECTOR_CANDIDATES]]
        chunk_hits = _chunk_keyword_ranking(self.assistant_id, self.account_id, words)
        faq_hits = _faq_keyword_ranking(loaded, words)
        by_keyword = [*faq_hits[:3], *[loaded.chunk_ids[c] for c in chunk_hits if c in loaded.chunk_ids]]
        keyword_rank = rank_of(by_keyword)
        # The vector side counts twice: across languages and paraphrases it is the one that knows.
        fused = reciprocal_rank_fusion([by_vector, by_vector, by_keyword])
        order = [p for p, _ in sorted(fused.items(), key=lambda item: -item[1])]
        terms = query_terms(query, context if len(tokens(query)) <= FOLLOW_UP_MAX_TOKENS else "")
        order = rerank(order, loaded.sources, vector_scores.tolist(), query, terms, loaded.terms, self.rerank)
        kept: list[int] = []
        candidates: list[dict[str, object]] = []
        for passage in order:
            source = loaded.sources[passage]
            cosine = float(vector_scores[passage])
            threshold = self.thresholds.faq if source.kind == "faq" else self.thresholds.chunk
            keyword_backed = keyword_rank.get(passage, 99) < 3 and cosine >= self.thresholds.keyword_backed
            keep = cosine >= threshold or keyword_backed
            if len(candidates) < 8:
                candidates.append({"ref": source.ref, "score": round(cosine, 3), "kept": keep})
            if keep:
                kept.append(passage)
        sources = tuple(
            _with_score(loaded.sources[p], float(vector_scores[p])) for p in _mix(loaded, kept, limit)
        )
        return Retrieval(
            query=query,
            sources=sources,
            best_score=float(np.max(vector_scores)),
            latency_ms=(time.monotonic() - started) * 1000,
            candidates=tuple(candidates),
            term_passages={t: loaded.terms.df.get(t, 0) for t in tokens(query)},
            passages=loaded.terms.passages,
        )


FAQ_SHARE = 2
"""At most this many of the sources are FAQ entries: a close FAQ entry is short and scores high, and would
otherwise crowd out the document passage that holds the detail a question asks about."""


def _mix(loaded: _Loaded, kept: list[int], limit: int) -> list[int]:
    """The first `limit` kept passages, in fused order, with at most FAQ_SHARE FAQ entries (more only when
    there are not enough passages)."""
    faqs = [p for p in kept if loaded.sources[p].kind == "faq"]
    chunks = [p for p in kept if loaded.sources[p].kind != "faq"]
    take = faqs[:FAQ_SHARE] + chunks[: limit - min(FAQ_SHARE, len(faqs))]
    take += [p for p in faqs[FAQ_SHARE:] if len(take) < limit]
    order = {p: i for i, p in enumerate(kept)}
    return sorted(take, key=order.__getitem__)[:limit]


def _with_score(source: Source, score: float) -> Source:
    return Source(source.kind, source.ref, source.title, source.text, source.url, score)


def knowledge_cache_clear() -> None:
    """Drop every loaded index (tests; a process that must free the memory)."""
    with _cache_lock:
        _cache.clear()
