"""Turn an assistant and its enabled scenarios into a team of runtime agents. By default Chatwoot's star
topology (triage <-> every scenario; each specialist can hand back); with a routing graph
(`captain.routing.services.routing`), each agent's handoff tools are exactly its graph candidates (edges + global
nodes), so a model can never transfer along an edge the builder did not draw."""

from __future__ import annotations

from dataclasses import dataclass

from captain.actions.services.tools import BUILTIN_TOOL_NAMES, build_tools
from captain.actions.services.tools.http import custom_tools_for
from captain.assistants.models import TRIAGE_KEY, Assistant, KnowledgeMode, Scenario, ScenarioMode
from captain.conf import captain_setting
from captain.knowledge.models import FaqEntry, KnowledgeChunk
from captain.prompts import PromptTemplateError, prompt_context, render_builder_text, render_file
from captain.prompts.context import TurnFacts
from captain.prompts.variables import memory_context, memory_declared
from captain.runtime import Agent, Handoff, ModelClient, PlanningSettings, Tool, handoff_tool_name
from captain.runtime.routing import HUMAN, Graph

TRIAGE_TOOLS = ("faq_lookup", "handoff_to_human")
BACK_TO_TRIAGE = "Transfer back to the assistant when the customer's request is outside your topic."


@dataclass(frozen=True)
class PromptVariables:
    """What builder-written instructions may refer to, e.g. `{{ contact.name }}`."""

    contact_name: str = ""

    def as_dict(self, assistant: Assistant) -> dict[str, object]:
        # prompt_context refuses any path the declaration (captain.prompts.variables) does not list, and
        # requires all it lists: the save-time check and this context cannot drift apart.
        return prompt_context(
            {
                "contact.name": self.contact_name,
                "assistant.name": assistant.name,
                "assistant.product_name": assistant.product_name,
            }
        )


def _render_builder_field(source: str, template_vars: dict[str, object], where: str) -> str:
    """Render one builder-written field; a failure names the field, for the run's handoff reason."""
    try:
        return render_builder_text(source, **template_vars)
    except PromptTemplateError as exc:
        raise PromptTemplateError(f"the {where} template is invalid: {exc}") from exc


def _as_list(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    if isinstance(value, str) and value.strip():
        return [line.strip("- ").strip() for line in value.splitlines() if line.strip()]
    return []


def _graph_handoffs(graph: Graph, key: str, scenarios: list[Scenario]) -> list[Handoff]:
    """Handoffs of `key` in the graph: its candidates that are agents of the team (people are reached through
    the `handoff_to_human` tool, not a handoff)."""
    described = {s.key: s.description for s in scenarios}
    return [
        Handoff(target_key=k, description=described.get(k) or BACK_TO_TRIAGE)
        for k in graph.candidates(key)
        if k != HUMAN and (k in described or k == TRIAGE_KEY)
    ]


@dataclass(frozen=True)
class AgentModel:
    """The model one specialist answers with when it differs from the assistant's (a per-scenario override)."""

    model: str
    temperature: float
    client: ModelClient | None = None
    """None: the run's model client (same endpoint as the assistant)."""
    credits: int | None = None
    """What a reply on this model costs, when it is not the assistant's model."""
    text_tools: bool = False
    """The model cannot return native tool calls: the agent uses the text tool protocol."""


def scenario_tools(scenario: Scenario, account_id: int) -> list[Tool]:
    """A specialist's tools: the escalation every agent must always be able to make, then its allowlist of
    built-in tools and the account's custom HTTP tools (a custom tool disabled or deleted since is left out)."""
    names = ["handoff_to_human", *[t for t in scenario.tools if t != "handoff_to_human"]]
    builtin = [n for n in names if n in BUILTIN_TOOL_NAMES]
    custom = {
        t.name: t for t in custom_tools_for(account_id, [n for n in names if n not in BUILTIN_TOOL_NAMES])
    }
    built = {t.name: t for t in build_tools(builtin)}
    return [tool for n in names if (tool := built.get(n) or custom.get(n)) is not None]


def system_prompt(persona: str, *, structured: bool) -> str:
    """The order every agent's prompt follows: the fixed safety rules first (builder text comes later and cannot
    override them), the persona with the builder's instructions, the reply format. All of it is the same on
    every turn; this turn's context (`turn_context`) is sent after it and the tool schemas."""
    parts = [render_file("safety.jinja"), persona]
    if structured:
        parts.append(render_file("reply_format.jinja"))
    return "\n\n".join(part.strip("\n") for part in parts if part.strip())


def turn_context(facts: TurnFacts | None) -> str:
    """This turn's context (the time, the channel, the customer, memory, extra blocks); empty without facts."""
    return render_file("context.jinja", facts=facts).strip("\n") if facts is not None else ""


def build_team(
    assistant: Assistant,
    *,
    variables: PromptVariables | None = None,
    graph: Graph | None = None,
    model: str = "",
    facts: TurnFacts | None = None,
    structured: bool = False,
    scenario_models: dict[str, AgentModel] | None = None,
    text_tools: bool = False,
) -> dict[str, Agent]:
    """The triage agent (key `assistant`) and one specialist per enabled scenario, keyed by stable keys.
    `graph`: restrict every agent's handoffs to its candidates in the routing graph (default: the star).
    `model`: the model the run checked against the assistant's endpoint (default: the assistant's own field).
    `facts`: this turn's context (date, channel, conversation, customer, memory); `structured`: agents answer
    `{response, reasoning}`; `scenario_models`: per-scenario model overrides, already checked by the caller;
    `text_tools`: the assistant's model uses the text tool protocol (no native tool calls)."""
    variables = variables or PromptVariables()
    scenario_models = scenario_models or {}
    remembered = {m.name: m.value for m in facts.memory} if facts is not None else {}
    names = list(assistant.memory_variables.values_list("name", flat=True))
    # Builder text may print `{{ memory.<name> }}`: declared for the static check and the render below.
    with memory_declared(names):
        template_vars = {**variables.as_dict(assistant), **memory_context(remembered)}
        return _build(assistant, graph, model, facts, structured, scenario_models, template_vars, text_tools)


@dataclass(frozen=True)
class _TeamSpec:
    """What every agent of one team is built from, resolved once per build."""

    assistant: Assistant
    scenarios: list[Scenario]
    graph: Graph | None
    model: str
    facts: TurnFacts | None
    structured: bool
    template_vars: dict[str, object]
    text_tools: bool
    has_faq: bool
    guidelines: list[str]
    guardrails: list[str]


def _build(
    assistant: Assistant,
    graph: Graph | None,
    model: str,
    facts: TurnFacts | None,
    structured: bool,
    scenario_models: dict[str, AgentModel],
    template_vars: dict[str, object],
    text_tools: bool,
) -> dict[str, Agent]:
    scenarios = list(Scenario.objects.filter(assistant=assistant, enabled=True).order_by("id"))
    spec = _TeamSpec(
        assistant=assistant,
        scenarios=scenarios,
        graph=graph,
        model=model or assistant.model or captain_setting("DEFAULT_MODEL"),
        facts=facts,
        structured=structured,
        template_vars=template_vars,
        text_tools=text_tools,
        has_faq=_has_knowledge(assistant),
        guidelines=_as_list(assistant.response_guidelines),
        guardrails=_as_list(assistant.guardrails),
    )
    team = {TRIAGE_KEY: _triage_agent(spec)}
    for scenario in scenarios:
        team[scenario.key] = _scenario_agent(spec, scenario, scenario_models.get(scenario.key))
    return team


def _has_knowledge(assistant: Assistant) -> bool:
    """The search tool is offered when there is knowledge to search (and the assistant uses knowledge at all)."""
    return assistant.knowledge_mode != KnowledgeMode.OFF and (
        FaqEntry.objects.filter(assistant=assistant, enabled=True, status=FaqEntry.Status.APPROVED).exists()
        or KnowledgeChunk.objects.filter(assistant=assistant).exists()
    )


def _triage_agent(spec: _TeamSpec) -> Agent:
    """The assistant itself: it answers general questions and hands over to the scenarios it may reach."""
    assistant, graph, scenarios = spec.assistant, spec.graph, spec.scenarios
    return Agent(
        key=TRIAGE_KEY,
        name=assistant.name,
        instructions=system_prompt(
            render_file(
                "assistant.jinja",
                assistant=assistant,
                instructions=_render_builder_field(
                    assistant.instructions, spec.template_vars, f"assistant '{assistant.name}' instructions"
                ),
                scenarios=[
                    {"tool_name": s.handoff_tool_name, "description": s.description}
                    for s in scenarios
                    if graph is None or s.key in graph.candidates(TRIAGE_KEY)
                ],
                guidelines=spec.guidelines,
                guardrails=spec.guardrails,
                knowledge_mode=assistant.knowledge_mode,
            ),
            structured=spec.structured,
        ),
        context=turn_context(spec.facts),
        model=spec.model,
        temperature=assistant.temperature,
        structured=spec.structured,
        tool_protocol="text" if spec.text_tools else "native",
        tools=build_tools(TRIAGE_TOOLS),
        handoffs=[Handoff(target_key=s.key, description=s.description) for s in scenarios]
        if graph is None
        else _graph_handoffs(graph, TRIAGE_KEY, scenarios),
    )


def _scenario_agent(spec: _TeamSpec, scenario: Scenario, override: AgentModel | None) -> Agent:
    """One specialist, on its own model when `override` says so."""
    assistant, graph = spec.assistant, spec.graph
    tools = scenario_tools(scenario, assistant.account_id)
    tool_names = [t.name for t in tools]
    # A planning agent answers through `final_answer`, never in the reply format.
    structured = spec.structured and scenario.mode != ScenarioMode.PLANNING
    return Agent(
        key=scenario.key,
        name=scenario.title,
        instructions=system_prompt(
            render_file(
                "scenario.jinja",
                assistant=assistant,
                scenario=scenario,
                instruction=_render_builder_field(
                    scenario.instruction, spec.template_vars, f"scenario '{scenario.title}' instruction"
                ),
                has_faq=spec.has_faq and "faq_lookup" in tool_names,
                back_tool=handoff_tool_name(TRIAGE_KEY),
                guidelines=spec.guidelines,
                guardrails=spec.guardrails,
            ),
            structured=structured,
        ),
        context=turn_context(spec.facts),
        model=override.model if override else spec.model,
        temperature=override.temperature if override else assistant.temperature,
        model_client=override.client if override else None,
        structured=structured,
        tools=tools,
        planning=PlanningSettings(max_tool_calls=scenario.max_tool_calls)
        if scenario.mode == ScenarioMode.PLANNING
        else None,
        tool_protocol="text" if (override.text_tools if override else spec.text_tools) else "native",
        handoffs=[Handoff(target_key=TRIAGE_KEY, description=BACK_TO_TRIAGE)]
        if graph is None
        else _graph_handoffs(graph, scenario.key, spec.scenarios),
    )
