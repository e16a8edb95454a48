"""Text similarity for FAQ lookup and semantic routing (no Django).

from captain.knowledge.services.retrieval import best_matches
hits = best_matches("how do I change my password", [(q, f"{q}\n{a}") for q, a in faqs], limit=3)
"""

from captain.knowledge.services.retrieval.embeddings import (
    ENCODER_THRESHOLD,
    LEXICAL_THRESHOLD,
    Document,
    LexicalScorer,
    Scorer,
    TextEncoder,
    active_backend,
    best_matches,
    encoder_available,
    get_encoder,
    get_scorer,
    rank,
)

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
