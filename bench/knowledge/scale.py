"""Retrieval at scale: an assistant with N chunks (texts recombined from the help centre's sentences, embedded by
the bundled encoder, stored as processing stores them), then the latency of `AssistantKnowledge.retrieve` over the
questions and the memory the index holds."""

from __future__ import annotations

import random
import re
import time
from typing import Any

from .dataset import HelpCentre
from .scoring import percentile


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def scale_figures(
    centre: HelpCentre, corpus: list[str], *, chunks: int, queries: int = 200
) -> dict[str, Any]:
    from captain.assistants.models import Assistant
    from captain.knowledge.models import KnowledgeChunk, KnowledgeDocument
    from captain.knowledge.services.knowledge_search import AssistantKnowledge, _loaded, knowledge_cache_clear
    from captain.knowledge.services.retrieval.passages import embed_passages, search_tokens
    from helpdesk.models import Account

    rng = random.Random(12)
    sentences = [
        s.strip() for text in corpus for s in re.split(r"(?<=[.!?。！？])\s*", text) if len(s.strip()) > 20
    ]
    account = Account.objects.create(name="bench scale")
    assistant = Assistant.objects.create(account=account, name="scale", product_name=centre.company)
    document = KnowledgeDocument.objects.create(
        account=account, assistant=assistant, kind="upload", title="scale", status="ready"
    )
    texts = [" ".join(rng.sample(sentences, k=min(4, len(sentences)))) for _ in range(chunks)]
    started = time.monotonic()
    vectors = embed_passages(texts)
    embed_seconds = time.monotonic() - started
    KnowledgeChunk.objects.bulk_create(
        [
            KnowledgeChunk(
                account=account,
                assistant=assistant,
                document=document,
                ordinal=i,
                text=text,
                search_text=search_tokens(text),
                embedding=vector,
            )
            for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
        ],
        batch_size=1000,
    )
    knowledge_cache_clear()
    base = AssistantKnowledge(assistant_id=assistant.id, account_id=account.id)
    rss_before = _rss_mib()
    started = time.monotonic()
    base.retrieve("warm up")
    load_seconds = time.monotonic() - started
    rss_after = _rss_mib()
    asked = [q.question for q in centre.questions]
    latencies = []
    for i in range(queries):
        question = f"{asked[i % len(asked)]} {i}"  # never the encoder's cached text: every query is encoded
        started = time.monotonic()
        base.retrieve(question)
        latencies.append((time.monotonic() - started) * 1000)
    index_bytes = _loaded(assistant.id, account.id).index.nbytes
    return {
        "chunks": chunks,
        "embed_seconds": round(embed_seconds, 1),
        "embed_ms_per_chunk": round(1000 * embed_seconds / chunks, 2),
        "index_load_seconds": round(load_seconds, 2),
        "index_vectors_mib": round(index_bytes / 2**20, 1),
        "process_rss_growth_on_load_mib": round(rss_after - rss_before, 1),
        "retrieve_ms_p50": round(percentile(latencies, 50), 1),
        "retrieve_ms_p95": round(percentile(latencies, 95), 1),
        "retrieve_ms_max": round(max(latencies), 1),
        "queries": queries,
    }
