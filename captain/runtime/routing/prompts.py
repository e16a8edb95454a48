"""Our router prompts, written from the routing view (never from the graph).

- A dedicated or custom router (modes router / custom): candidates = the node's edges only, windowed history,
  the builder's rule and the output contract LAST.
- The semantic router's tie-break questions: one token each, read through its log-probabilities.
"""

from __future__ import annotations

import json
from typing import Any

from .view import RoutingView

Messages = list[dict[str, Any]]


def _quoted(message: str) -> str:
    return json.dumps(message, ensure_ascii=False)


# ---- a dedicated or custom router (modes router / custom) ----------------------------------------------------


def router_messages(
    view: RoutingView, candidates: list[str], message: str, *, rule_prompt: str = ""
) -> tuple[Messages, list[str]]:
    """(messages, enum). The option ids are `stay` and the candidate keys (all of the view's, or the encoder's
    shortlist of them). Fixed order: task, options, windowed history, latest message, then the builder's rule,
    then the output contract, so the two things a small model must obey sit right before its answer however
    long the conversation is."""
    enum = ["stay", *candidates]
    options = [f"- stay: {view.title} keeps the conversation ({view.description})".rstrip()]
    options += [f"- {key}: {view.descriptions[key]}" for key in candidates]
    parts = [
        "You route a customer-support conversation to the right agent.",
        f"Agent in charge now: {view.title}.",
        "Options:\n" + "\n".join(options),
        "Recent conversation:\n" + view.recent,
        f"Latest customer message: {_quoted(message)}",
    ]
    if rule_prompt.strip():
        parts.append(f"Builder's rule (follow it): {rule_prompt.strip()}")
    parts.append(
        'Answer with JSON {"route": "<id>"} where <id> is one of: '
        + ", ".join(enum)
        + ". Choose stay unless the latest message clearly belongs to another option."
    )
    return [{"role": "user", "content": "\n\n".join(parts)}], enum


# ---- the semantic router's tie-break questions -----------------------------------------------------------------


def _two_topics(view: RoutingView, other: str, message: str, question: str) -> Messages:
    text = "\n\n".join(
        [
            f"Topic A: {view.topic}",
            f"Topic B: {other}",
            "Previous messages:\n" + view.last_round,
            f"Latest customer message: {_quoted(message)}",
            question,
        ]
    )
    return [{"role": "user", "content": text}]


def switch_question(view: RoutingView, other: str, message: str) -> Messages:
    """ "Is the latest message about topic B?" (yes/no). Asked together with `stay_question`: a 0.5B model says
    yes to almost anything, but it says yes MORE to the true one, so the two answers are compared."""
    return _two_topics(view, other, message, "Is the latest message about topic B? Answer yes or no.")


def ab_question(view: RoutingView, other: str, message: str) -> Messages:
    """One call: "is the latest message about A (the current topic) or B?", answered with one letter and read
    through log-probabilities; the small model's preference for "A" is corrected by a calibrated offset."""
    return _two_topics(view, other, message, "Is the latest message about topic A or topic B? Answer A or B.")


def stay_question(view: RoutingView, message: str) -> Messages:
    """ "Does the latest message stay on the current topic?" (yes/no)."""
    text = "\n\n".join(
        [
            f"Current topic: {view.topic}",
            "Previous messages:\n" + view.last_round,
            f"Latest customer message: {_quoted(message)}",
            "Does the latest message stay on the current topic? Answer yes or no.",
        ]
    )
    return [{"role": "user", "content": text}]
