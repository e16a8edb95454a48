"""Router prompts: ours (candidates = edges only, windowed history, builder rule and output contract LAST) and
the Coze replica (seed 000, verbatim template: every agent listed, the builder's rule between the list and the
constraints, the whole history).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .graph import Graph, Node, Rule

MAX_HISTORY_CHARS = 160
"""Each history message is cut to this many characters in our router prompts (the latest message is not)."""


@dataclass(frozen=True)
class Turn:
    """One message of the conversation as the router sees it."""

    role: str
    """user or assistant."""
    content: str
    agent: str = ""
    """Node key that wrote an assistant message."""


def window(history: list[Turn], rounds: int) -> list[Turn]:
    """The last `rounds` customer rounds (a customer message and the replies after it); 0 -> nothing."""
    if rounds <= 0:
        return []
    starts = [i for i, t in enumerate(history) if t.role == "user"]
    if len(starts) <= rounds:
        return list(history)
    return history[starts[-rounds] :]


def _cut(text: str, limit: int = MAX_HISTORY_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_history(graph: Graph, turns: list[Turn]) -> str:
    lines = []
    for t in turns:
        if t.role == "user":
            lines.append(f"customer: {_cut(t.content)}")
        else:
            who = graph.nodes[t.agent].title if t.agent in graph.nodes else "agent"
            lines.append(f"{who}: {_cut(t.content)}")
    return "\n".join(lines) or "(none)"


def describe(node: Node) -> str:
    return f"{node.title}: {node.description}".strip().rstrip(":")


# ---- ours: a dedicated or custom router (modes router / custom) ---------------------------------------------


def router_messages(
    graph: Graph,
    node: Node,
    candidates: list[str],
    message: str,
    history: list[Turn],
    *,
    rule_prompt: str = "",
) -> tuple[list[dict[str, Any]], list[str]]:
    """(messages, enum). The option ids are `stay` and the candidate keys. Fixed order: task, options, windowed
    history, latest message, then the builder's rule, then the output contract, so the two things a small model
    must obey sit right before its answer however long the conversation is."""
    enum = ["stay", *candidates]
    options = [f"- stay: {node.title} keeps the conversation ({node.description})".rstrip()]
    options += [f"- {key}: {describe(graph.nodes[key])}" for key in candidates]
    turns = window(history, graph.history_rounds_of(node.key))
    parts = [
        "You route a customer-support conversation to the right agent.",
        f"Agent in charge now: {node.title}.",
        "Options:\n" + "\n".join(options),
        "Recent conversation:\n" + render_history(graph, turns),
        f"Latest customer message: {json.dumps(message, ensure_ascii=False)}",
    ]
    if rule_prompt.strip():
        parts.append(f"Builder's rule (follow it): {rule_prompt.strip()}")
    parts.append(
        'Answer with JSON {"route": "<id>"} where <id> is one of: '
        + ", ".join(enum)
        + ". Choose stay unless the latest message clearly belongs to another option."
    )
    return [{"role": "user", "content": "\n\n".join(parts)}], enum


# ---- ours: the semantic router's tie-break (one letter, read through log-probabilities) --------------------

LETTERS = "ABCDEFGH"


def tiebreak_messages(
    graph: Graph, node: Node, options: list[str], message: str, history: list[Turn]
) -> tuple[list[dict[str, Any]], list[str]]:
    """(messages, letters). `options` are node keys; the current node's key means "continues the current
    topic"."""
    lines = []
    for letter, key in zip(LETTERS, options, strict=False):
        if key == node.key:
            lines.append(f"{letter}) continues the current topic ({describe(node)})")
        else:
            lines.append(f"{letter}) {describe(graph.nodes[key])}")
    letters = list(LETTERS[: len(options)])
    turns = window(history, min(graph.history_rounds_of(node.key), 1))
    text = "\n\n".join(
        [
            "Classify the customer's latest message in a support chat.",
            "Previous messages:\n" + render_history(graph, turns),
            f"Latest customer message: {json.dumps(message, ensure_ascii=False)}",
            "Which option fits the latest message?\n" + "\n".join(lines),
            f"Answer with one letter ({', '.join(letters)}).",
        ]
    )
    return [{"role": "user", "content": text}], letters


def topic_of(graph: Graph, node: Node) -> str:
    if node.key == graph.root:
        return "general questions, greetings, nothing specific yet"
    return describe(node)


def _two_topics(
    graph: Graph, node: Node, other: str, message: str, history: list[Turn], question: str
) -> list[dict[str, Any]]:
    turns = window(history, min(graph.history_rounds_of(node.key), 1))
    text = "\n\n".join(
        [
            f"Topic A: {topic_of(graph, node)}",
            f"Topic B: {other}",
            "Previous messages:\n" + render_history(graph, turns),
            f"Latest customer message: {json.dumps(message, ensure_ascii=False)}",
            question,
        ]
    )
    return [{"role": "user", "content": text}]


def switch_question(
    graph: Graph, node: Node, other: str, message: str, history: list[Turn]
) -> list[dict[str, Any]]:
    """ "Is the latest message about topic B?" (yes/no). Asked together with `stay_question`: a 0.5B model says
    yes to almost anything, but it says yes MORE to the true one, so the two answers are compared."""
    return _two_topics(
        graph, node, other, message, history, "Is the latest message about topic B? Answer yes or no."
    )


def ab_question(
    graph: Graph, node: Node, other: str, message: str, history: list[Turn]
) -> list[dict[str, Any]]:
    """One call: "is the latest message about A (the current topic) or B?", answered with one letter and read
    through log-probabilities; the small model's preference for "A" is corrected by a calibrated offset."""
    return _two_topics(
        graph, node, other, message, history, "Is the latest message about topic A or topic B? Answer A or B."
    )


def stay_question(graph: Graph, node: Node, message: str, history: list[Turn]) -> list[dict[str, Any]]:
    """ "Does the latest message stay on the current topic?" (yes/no)."""
    turns = window(history, min(graph.history_rounds_of(node.key), 1))
    text = "\n\n".join(
        [
            f"Current topic: {topic_of(graph, node)}",
            "Previous messages:\n" + render_history(graph, turns),
            f"Latest customer message: {json.dumps(message, ensure_ascii=False)}",
            "Does the latest message stay on the current topic? Answer yes or no.",
        ]
    )
    return [{"role": "user", "content": text}]


# ---- the Coze replica ----------------------------------------------------------------------------------------

COZE_TEMPLATE = (
    "# INSTRUCTION\nYou are an AI agent responsible for routing, and your job is to select the most suitable "
    "agent from the following agents based on user needs and lastest chat history.\n\n"
    "# AGENTS / BOTS LIST\n{agents}\n\n"
    "#USER REQUEST\n{user_request}\n\n"
    "# CONSTRAINT\nStrictly according to the above USER REQUEST, select the most suitable agent from the AGENTS "
    "LIST.\nYou must only reply the agent_id with nothing else. If you think there is no suitable agent, then "
    "output 0.\n**Note: You can only output the value of the agent_id or 0, your output should be pure numbers, "
    "do not output other content!**\n\n"
    "# PREVIOUS CONVERSATION HISTORY\n{history}"
)


def coze_agents(graph: Graph, node: Node) -> list[str]:
    """Every agent but the one in charge, whatever the edges say (Coze's first fault)."""
    return [k for k in graph.nodes if k != node.key]


def coze_rule_text(graph: Graph, rules: list[Rule]) -> str:
    """Rules as the seed's author had to write them for Coze: as prose in the USER REQUEST slot."""
    parts = []
    for rule in rules:
        title = graph.nodes[rule.to].title if rule.to in graph.nodes else rule.to
        if rule.match == "exact":
            parts.append(
                f'If the last input from the user is *exactly*"{rule.value}", select the agent with the name "{title}".'
            )
        elif rule.match == "contains":
            parts.append(
                f'If the last input from the user contains "{rule.value}", select the agent with the name "{title}".'
            )
        elif rule.value in ("", ".*", "^", "."):
            parts.append(f'You MUST select the agent with the name "{title}" unconditionally.')
        else:
            parts.append(
                f'If the last input from the user matches the pattern /{rule.value}/, select the agent with the name "{title}".'
            )
    if parts and not any("unconditionally" in p for p in parts):
        parts.append("Otherwise, output 0.")
    return "\n\n".join(parts)


def coze_history(graph: Graph, history: list[Turn], message: str) -> str:
    """The whole conversation (the rounds option has no effect in Coze), in the seed's format."""
    out = []
    for t in history:
        if t.role == "user":
            out.append(f"user:{t.content}\n")
        else:
            name = graph.nodes[t.agent].title if t.agent in graph.nodes else t.agent
            out.append(f"assistant:{t.content}\n(by agent `{name}`)\n")
    out.append(f"user:{message}\n")
    return "\n".join(out)


def coze_prompt(graph: Graph, node: Node, message: str, history: list[Turn]) -> tuple[str, list[str]]:
    """(system prompt, agent keys by agent_id - 1)."""
    keys = coze_agents(graph, node)
    agents = [
        {"condition": graph.nodes[k].description, "agent_id": i, "agent_name": graph.nodes[k].title}
        for i, k in enumerate(keys, start=1)
    ]
    body = ",\n".join(
        " {\n"
        + f' "condition":{json.dumps(a["condition"], ensure_ascii=False)},\n'
        + f' "agent_id": {a["agent_id"]},\n'
        + f' "agent_name":{json.dumps(a["agent_name"], ensure_ascii=False)}\n'
        + " }"
        for a in agents
    )
    user_request = node.rule_prompt.strip() or coze_rule_text(graph, node.rules)
    prompt = COZE_TEMPLATE.format(
        agents=f"[\n{body}\n]", user_request=user_request, history=coze_history(graph, history, message)
    )
    return prompt, keys
