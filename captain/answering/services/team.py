"""Building the AI team of an assistant for one turn: `runner_for(assistant, ...)` is the one place that turns DB
rows into a `TeamRunner` (agents, graph, routing strategy, model clients). Production runs and the playground
both call it, so the playground shows exactly what production does."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from captain.answering.services.config_cache import cached
from captain.answering.services.live import LivePublisher
from captain.assistants.models import Assistant, KnowledgeMode, Scenario
from captain.assistants.services.agents import build_team
from captain.assistants.services.agents.builder import AgentModel, PromptVariables, turn_context
from captain.assistants.services.model_endpoints import (
    Endpoint,
    EndpointUnavailable,
    endpoint_and_model,
    model_client_for,
)
from captain.conf import captain_setting
from captain.knowledge.services.knowledge_search import AssistantKnowledge, has_knowledge
from captain.prompts.context import TurnFacts
from captain.prompts.variables import memory_context
from captain.routing.models import RoutingConfig
from captain.routing.services.routing import routing_graph, star_graph
from captain.runtime import Agent, RunContext, Runner
from captain.runtime.hooks import FanOutHooks
from captain.runtime.knowledge import KnowledgeAnswerer, KnowledgeSettings, TopicGate
from captain.runtime.routing import Graph, OursStrategy, Policy, Router, RouterEndpoint
from captain.runtime.team import Answerer, Team, TeamHooks, TeamRunner
from captain.runtime.tracing import TracingHooks

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TeamModel:
    """The endpoint and model the assistant's agents answer with (checked and priced before the run)."""

    endpoint: Endpoint
    model: str


def team_model_for(assistant: Assistant) -> TeamModel:
    """The assistant's endpoint and model. Raises EndpointUnavailable when either is gone."""
    endpoint, model = endpoint_and_model(
        account_id=assistant.account_id, endpoint=assistant.model_endpoint, model=assistant.model
    )
    return TeamModel(endpoint, model)


def enabled_scenarios(assistant: Assistant) -> list[Scenario]:
    """The assistant's enabled scenarios in their order (cached per configuration version: never mutate)."""
    return cached(
        ("scenarios", assistant.pk),
        lambda: list(Scenario.objects.filter(assistant=assistant, enabled=True).order_by("id")),
    )


def scenario_models(assistant: Assistant, team_model: TeamModel) -> dict[str, AgentModel]:
    """Specialists that answer with another model or temperature than the assistant's. A model is used only
    when its endpoint offers it (the same check as the assistant's own); one that is gone falls back to the
    assistant's model, with a warning, rather than failing the turn."""
    overrides: dict[str, AgentModel] = {}
    for scenario in enabled_scenarios(assistant):
        if not (scenario.model or scenario.model_endpoint or scenario.temperature is not None):
            continue
        temperature = scenario.temperature if scenario.temperature is not None else assistant.temperature
        if not (scenario.model or scenario.model_endpoint):
            overrides[scenario.key] = AgentModel(
                model=team_model.model,
                temperature=temperature,
                text_tools=team_model.endpoint.uses_text_tools(team_model.model),
            )
            continue
        try:
            endpoint, model = endpoint_and_model(
                account_id=assistant.account_id,
                endpoint=scenario.model_endpoint or assistant.model_endpoint,
                model=scenario.model,
            )
        except EndpointUnavailable as exc:
            logger.warning(
                "scenario %s: its model cannot be used (%s); using the assistant's", scenario.key, exc
            )
            overrides[scenario.key] = AgentModel(
                model=team_model.model,
                temperature=temperature,
                text_tools=team_model.endpoint.uses_text_tools(team_model.model),
            )
            continue
        same_endpoint = (
            endpoint.name == team_model.endpoint.name and endpoint.own_id == team_model.endpoint.own_id
        )
        client = None if same_endpoint else model_client_for(endpoint)
        overrides[scenario.key] = AgentModel(
            model=model,
            temperature=temperature,
            client=client,
            credits=endpoint.credits_for(model),
            text_tools=endpoint.uses_text_tools(model),
        )
    return overrides


def team_credits(team_model: TeamModel, overrides: dict[str, AgentModel]) -> int:
    """What one AI reply of this team costs: the dearest model any of its agents may answer with (held before
    the run, when it is not yet known which agent will answer)."""
    own = team_model.endpoint.credits_for(team_model.model)
    return max([own, *[o.credits for o in overrides.values() if o.credits is not None]])


def team_for(
    assistant: Assistant,
    *,
    team_model: TeamModel,
    contact_name: str = "",
    facts: TurnFacts | None = None,
    structured: bool = True,
    overrides: dict[str, AgentModel] | None = None,
    knowledge: bool | None = None,
) -> Team:
    """The assistant's agents and graph. Without a routing configuration the team is the plain star: the
    agents are built exactly as always (triage <-> every specialist) and every node decides with its tools.
    `overrides`: `scenario_models(...)` when the caller has it already; `knowledge`: whether the assistant
    uses knowledge and has some (`_uses_knowledge`), likewise."""
    variables = PromptVariables(contact_name=contact_name if assistant.share_contact_details else "")
    # Whether a routing configuration exists is configuration (cached); the graph itself is read every run,
    # because its learned examples change without a save signal (reviews, drafts).
    routed = cached(
        ("routed", assistant.pk), lambda: RoutingConfig.objects.filter(assistant=assistant).exists()
    )
    graph = routing_graph(assistant) if routed else None
    if overrides is None:
        overrides = scenario_models(assistant, team_model)
    if knowledge is None:
        knowledge = _uses_knowledge(assistant)
    text_tools = team_model.endpoint.uses_text_tools(team_model.model)
    # Everything the built agents depend on besides the configuration (which the version covers): the
    # builder's template variables, the models, the graph's handoffs, whether there is knowledge to search.
    key = (
        "team",
        assistant.pk,
        _template_key(assistant, variables, facts),
        team_model.model,
        structured,
        text_tools,
        knowledge,
        _overrides_key(overrides),
        None if graph is None else _handoffs_key(graph),
    )

    def build() -> dict[str, Agent]:
        return build_team(
            assistant,
            graph=graph,  # None: the plain star, built exactly as always
            variables=variables,
            model=team_model.model,
            facts=facts,
            structured=structured,
            scenario_models=overrides,
            text_tools=text_tools,
        )

    built = cached(key, build)
    # The turn's context is the only per-turn part of an agent (sent after its fixed instructions).
    context = turn_context(facts)
    agents = {
        k: a if a.context == context else dataclasses.replace(a, context=context) for k, a in built.items()
    }
    if graph is None:
        graph = cached(("star", assistant.pk), lambda: star_graph(assistant))
    return Team(agents=agents, graph=graph)


def _template_key(assistant: Assistant, variables: PromptVariables, facts: TurnFacts | None) -> str:
    """The variables the builder's text is rendered with (the contact's name, memory values), when that text
    has any template syntax: text without a `{` is used as written (`render_builder_text`), so the same agents
    serve every customer."""
    texts = [assistant.instructions, *[s.instruction for s in enabled_scenarios(assistant)]]
    if not any("{" in text for text in texts):
        return ""
    remembered = {m.name: m.value for m in facts.memory} if facts is not None else {}
    return json.dumps([variables.as_dict(assistant), memory_context(remembered)], sort_keys=True, default=str)


def _uses_knowledge(assistant: Assistant) -> bool:
    """The assistant uses knowledge and has some to search (read every run: documents change without a save
    of the assistant); read with the assistant when it came from `assistant_serving`."""
    if assistant.knowledge_mode == KnowledgeMode.OFF:
        return False
    present = getattr(assistant, "knowledge_present", None)
    return bool(present) if present is not None else has_knowledge(assistant)


def _overrides_key(overrides: dict[str, AgentModel]) -> tuple[object, ...]:
    # A client is the same object run after run (clients are cached per endpoint); the entry holding it keeps
    # it alive, so its id cannot be reused by another client while the entry exists.
    return tuple(
        (k, o.model, o.temperature, id(o.client) if o.client is not None else None, o.credits, o.text_tools)
        for k, o in sorted(overrides.items())
    )


def _handoffs_key(graph: Graph) -> tuple[object, ...]:
    """What the builder reads of a graph: every node's candidates."""
    return tuple((k, tuple(graph.candidates(k))) for k in graph.nodes)


def runner_for(
    assistant: Assistant,
    *,
    team_model: TeamModel,
    context: RunContext,
    contact_name: str = "",
    record_content: bool | None = None,
    hooks: Sequence[TeamHooks] = (),
    facts: TurnFacts | None = None,
    live_scope: str | None = None,
    overrides: dict[str, AgentModel] | None = None,
) -> TeamRunner:
    """The TeamRunner for one turn of `assistant`'s team. `record_content=None` follows RECORD_CONTENT;
    `hooks` observe the turn as it runs (spans are always recorded); `facts`: the turn's context block;
    `live_scope` (`conversation:<id>`, `playground:<run_id>`): publish thoughts and events there as they
    happen (captain.answering.services.live); `overrides`: `scenario_models(...)` when the caller has it."""
    knowledge = _uses_knowledge(assistant)
    team = team_for(
        assistant,
        team_model=team_model,
        contact_name=contact_name,
        facts=facts,
        overrides=overrides,
        knowledge=knowledge,
    )
    if record_content is None:
        record_content = captain_setting("RECORD_CONTENT")
    tracing = TracingHooks(record_content=record_content)
    runner = Runner(
        model_client_for(team_model.endpoint),
        max_turns=max(1, min(assistant.max_turns, captain_setting("MAX_TURNS_CAP"))),
        deadline_seconds=captain_setting("RUN_DEADLINE_SECONDS"),
        record_content=record_content,
        hooks=FanOutHooks(tracing, LivePublisher(live_scope)) if live_scope else tracing,
        artifact_threshold=int(captain_setting("ARTIFACT_THRESHOLD_CHARS")) or None,
    )
    graph_model = team.graph.router.model

    def routers(node_router: RouterEndpoint) -> Router:
        return _router_for(
            node_router, account_id=assistant.account_id, team_model=team_model, graph_model=graph_model
        )

    from captain.knowledge.services.retrieval import encoder_available, get_encoder

    encoder = get_encoder() if encoder_available() else None
    strategy = OursStrategy(encoder=encoder, routers=routers)
    # Every reply is checked, knowledge or not: an assistant without knowledge has its tools' results and the
    # conversation as sources, and an order number no tool returned is refused like an invented price.
    settings = knowledge_settings_for(assistant, team)
    knows = encoder is not None and knowledge
    if not knows:
        settings = dataclasses.replace(settings, mode="off")
    answer: Answerer = KnowledgeAnswerer(
        runner=runner,
        agents=team.agents,
        context=context,
        base=AssistantKnowledge(assistant_id=assistant.id, account_id=assistant.account_id),
        settings=settings,
        gate=TopicGate(encode=encoder.encode, scope_texts=_scope_texts(assistant))
        if knows and encoder
        else None,
        encode=encoder.encode if encoder is not None else None,
        on_step=[tracing.on_knowledge],
    )
    return TeamRunner(
        team=team,
        strategy=strategy,
        answer=answer,
        policy=Policy(model_calls=captain_setting("ROUTER_MODEL_CALLS_PER_MESSAGE")),
        hooks=[tracing, *hooks],
    )


# Tools that only read the knowledge or hand over: an agent with nothing else needs no gate exemption.
_ANSWER_ONLY_TOOLS = frozenset({"faq_lookup", "handoff_to_human"})


def knowledge_settings_for(assistant: Assistant, team: Team) -> KnowledgeSettings:
    """The assistant's knowledge settings for a turn. The gate may answer "not found" only for agents that
    cannot act: a specialist with tools (labels, priorities, an order lookup) needs no knowledge to use them."""
    return KnowledgeSettings(
        mode=assistant.knowledge_mode,  # type: ignore[arg-type]  # choices of the model field
        when_unknown=assistant.when_unknown,  # type: ignore[arg-type]  # choices of the model field
        unknown_message=assistant.unknown_message.strip(),
        off_topic_message=assistant.off_topic_message.strip(),
        cite_links=assistant.cite_links,
        grounding_check=bool(captain_setting("KNOWLEDGE_GROUNDING_CHECK")),
        faq_answer_score=captain_setting("KNOWLEDGE_FAQ_ANSWER_SCORE"),
        company=assistant.product_name or assistant.name,
        answer_only_agents=frozenset(
            key for key, agent in team.agents.items() if {t.name for t in agent.tools} <= _ANSWER_ONLY_TOOLS
        ),
    )


def _scope_texts(assistant: Assistant) -> list[str]:
    """What the builder says the assistant is for: the gate's measure of "a question about the company"."""
    texts = [assistant.product_name, assistant.description]
    for scenario in enabled_scenarios(assistant):
        texts.append(f"{scenario.title}: {scenario.description}")
    return [t for t in texts if t and t.strip()]


def _router_for(
    node_router: RouterEndpoint, *, account_id: int, team_model: TeamModel, graph_model: str
) -> Router:
    """(model client, model name) for a node's router: the endpoint it names (validated when saved), else the
    assistant's own endpoint. An endpoint removed since falls back to the assistant's, never to a URL."""
    if node_router.endpoint:
        try:
            endpoint, model = endpoint_and_model(
                account_id=account_id, endpoint=node_router.endpoint, model=node_router.model or graph_model
            )
            return model_client_for(endpoint), model
        except EndpointUnavailable as exc:
            logger.warning("router endpoint unusable (%s); using the assistant's", exc)
    model = node_router.model or graph_model or team_model.model
    if not team_model.endpoint.offers(model):
        model = team_model.model
    return model_client_for(team_model.endpoint), model
