"""The offline replay of saved knowledge-benchmark replies: how it labels a reply and counts what the check
refuses (bench/knowledge/replay.py)."""

from __future__ import annotations

from bench.knowledge.dataset import Question
from bench.knowledge.replay import summary, verdict


def q(kind: str, facts=()) -> Question:
    return Question(id="x", lang="en", kind=kind, question="?", facts=[list(f) for f in facts])


def test_a_reply_is_labelled_as_the_benchmark_scores_it():
    price = q("document", facts=[["€8"]])
    assert verdict(price, "A large locker is €8 a day.") == "right"
    assert verdict(price, "A large locker is €4 a day.") == "not right"
    assert verdict(price, "I'm sorry, I don't have information about that.") == "declined"
    assert verdict(q("unanswerable"), "Yes, scholarships are 20% off.") == "unanswerable"


def test_the_summary_counts_refused_replies_per_verdict():
    rows = [
        {"verdict": "right", "refused": []},
        {"verdict": "right", "refused": ["wrong_context"]},
        {"verdict": "unanswerable", "refused": ["unknown_topic"]},
    ]
    assert summary(rows) == {"right": "1/2", "unanswerable": "1/1"}
