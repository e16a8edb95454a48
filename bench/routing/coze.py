"""The benchmark's baseline: the router Coze ran in seed 000, replicated faithfully (design note `ROUTING.md`).

Its prompt verbatim (every agent listed, not only the edges; the builder's rule between the list and the
constraints; the whole history), a bare number as output, and whatever agent that number names is where control
goes, even off the edges; with `COZE_POLICY` the node reached checks the same input again and control slides on.
Not a product path: only the benchmark and the tests of Coze's faults use it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from captain.runtime import ModelError, ModelSettings
from captain.runtime.routing import Decision, DecisionRequest, Graph, Node, Policy, RouterFactory, Rule, Turn
from captain.runtime.routing.request import stay

COZE_POLICY = Policy(slide=True, redispatch=False, model_calls=1_000)
"""Coze re-checked the node a jump reached on the same input, never re-dispatched, and had no call budget."""

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


@dataclass(frozen=True)
class CozeStrategy:
    """Seed 000's router, faithfully: every agent listed (not only the edges), the builder's rule mid-prompt,
    the whole history, a bare number as output, and whatever agent that number names is where control goes."""

    routers: RouterFactory
    name: str = "coze"
    max_tokens: int = 8
    """Coze asked for up to 600 tokens; a number needs a few. Only the cost differs."""

    def decide(self, request: DecisionRequest) -> Decision:
        graph, node = request.graph, request.current
        if node.terminal:
            return stay(request, "none", "terminal node")
        prompt, keys = coze_prompt(graph, node, request.message, request.history)

        def decision(reason: str, target: str = request.node, **asked: Any) -> Decision:
            return Decision(
                node=request.node,
                phase=request.phase,
                mode="coze",
                candidates=request.candidates(),
                target=target,
                reason=reason,
                prompt=prompt,
                **asked,
            )

        router = self.routers(graph.router_of(node.key))
        if router is None:
            return decision("no router model configured: stay")
        client, model = router
        try:
            response = client.complete(
                model=model,
                messages=[{"role": "system", "content": prompt}],
                settings=ModelSettings(temperature=0, max_tokens=self.max_tokens),
            )
        except ModelError as exc:
            return decision(f"router model failed ({exc.kind}): stay")
        content = response.content or ""
        asked: dict[str, Any] = {
            "model": model,
            "raw_output": content,
            "llm_calls": 1,
            "input_tokens": response.usage.input_tokens,
            "output_tokens": response.usage.output_tokens,
            "latency_ms": response.latency_ms,
        }
        match = re.search(r"\d+", content)
        if match is None:
            return decision("unparseable output: stay", refused=True, **asked)
        index = int(match.group())
        if index == 0:
            return decision("router output 0: stay", **asked)
        if index > len(keys):
            return decision(f"agent_id {index} does not exist: stay", refused=True, **asked)
        target = keys[index - 1]
        return decision(
            f"agent_id {index} -> {target}",
            target,
            parsed=target,
            out_of_candidates=target not in graph.candidates(node.key),
            **asked,
        )
