"""The built-in tools: faq_lookup, handoff_to_human, resolve_conversation, add_label, set_priority, remember,
add_private_note."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from captain.knowledge.services.knowledge_search import AssistantKnowledge
from captain.runtime import HumanHandoff, Resolve, RunContext, Tool, ToolOutput
from captain.runtime.knowledge.answerer import LEDGER_KEY, SourceLedger
from captain.runtime.knowledge.sources import source_text
from helpdesk.models import Conversation
from helpdesk.selectors import access_conversation, label_names
from helpdesk.services import conversations as conversation_services
from helpdesk.services.activities import AI
from helpdesk.services.messages import message_create_note

NOTHING_RELEVANT = "Nothing relevant was found in the knowledge base."


def _conversation(ctx: RunContext) -> Conversation | None:
    if ctx.conversation_id is None:
        return None
    return access_conversation(account_id=ctx.account_id, conversation_id=ctx.conversation_id)


def is_dry_run(ctx: RunContext) -> bool:
    """Playground runs have no customer conversation: tools describe what they would do and change nothing."""
    return bool(ctx.extra.get("dry_run")) or ctx.conversation_id is None


def faq_lookup(ctx: RunContext, args: dict[str, Any]) -> str:
    """The knowledge search tool: the same hybrid search and the same numbered sources as the ones injected
    into the prompt (a source already given keeps its number), so citations and the grounding check see it."""
    retrieval = AssistantKnowledge(
        assistant_id=ctx.extra["assistant_id"], account_id=ctx.account_id
    ).retrieve(args["query"], limit=3)
    if not retrieval.found:
        return NOTHING_RELEVANT
    ledger = ctx.extra.get(LEDGER_KEY)
    if not isinstance(ledger, SourceLedger):  # a run without the knowledge step (knowledge off)
        ledger = SourceLedger()
    return "\n\n".join(source_text(n, source) for n, source in ledger.add(retrieval.sources))


def handoff_to_human(ctx: RunContext, args: dict[str, Any]) -> ToolOutput:
    # The escalation itself happens when the outcome is applied, in the same transaction as the rest.
    return ToolOutput(
        content="The conversation will be handed to the support team.",
        outcome=HumanHandoff(reason=args["reason"], priority=args.get("priority")),
    )


def resolve_conversation(ctx: RunContext, args: dict[str, Any]) -> ToolOutput:
    return ToolOutput(
        content="The conversation will be resolved.", outcome=Resolve(reason=args.get("reason", ""))
    )


def add_label(ctx: RunContext, args: dict[str, Any]) -> str:
    """Only the account's existing labels: a model inventing labels fills the team's label list with noise."""
    known = label_names(account_id=ctx.account_id)
    if args["label"] not in known:
        choices = ", ".join(known) if known else "none: this team has no labels yet"
        return f"Label '{args['label']}' does not exist; nothing was changed. Labels you may use: {choices}."
    conversation = None if is_dry_run(ctx) else _conversation(ctx)
    if conversation is not None:
        conversation_services.conversation_add_label(
            conversation=conversation, name=args["label"], by=AI, create=False
        )
    return f"Label '{args['label']}' added."


def set_priority(ctx: RunContext, args: dict[str, Any]) -> str:
    conversation = None if is_dry_run(ctx) else _conversation(ctx)
    if conversation is not None:
        conversation_services.conversation_set_priority(
            conversation=conversation, priority=args["priority"], by=AI
        )
    return f"Priority set to {args['priority']}."


def add_private_note(ctx: RunContext, args: dict[str, Any]) -> str:
    conversation = None if is_dry_run(ctx) else _conversation(ctx)
    if conversation is not None:
        message_create_note(conversation=conversation, content=args["note"])
    return "Note added for the support team."


def remember(ctx: RunContext, args: dict[str, Any]) -> str:
    """Store a declared memory variable for this customer or conversation; undeclared names and invalid values
    are refused with a message the model can act on, and nothing is stored."""
    from captain.assistants.models import Assistant
    from captain.memory.services.memory import MemoryWriteRefused, memory_write

    assistant = Assistant.objects.filter(pk=ctx.extra["assistant_id"], account_id=ctx.account_id).first()
    conversation = None if is_dry_run(ctx) else _conversation(ctx)
    if assistant is None:
        return "Nothing was remembered: the assistant is gone."
    if conversation is None:
        return f"Would remember {args['name']} (playground: nothing is stored)."
    try:
        row = memory_write(
            assistant=assistant,
            conversation=conversation,
            name=args["name"],
            value=args["value"],
            writer="ai",
        )
    except MemoryWriteRefused as exc:
        return f"Nothing was remembered: {exc}"
    return f"Remembered {args['name']} = {row.value}."


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_PRIORITIES = [p for p in Conversation.Priority.values if p != Conversation.Priority.NONE]

_SPECS: dict[str, tuple[str, dict[str, Any], Callable[[RunContext, dict[str, Any]], Any]]] = {
    "faq_lookup": (
        "Search the knowledge base (approved FAQ answers and the team's documents) for the facts you need.",
        _schema({"query": {"type": "string", "minLength": 1, "maxLength": 500}}, ["query"]),
        faq_lookup,
    ),
    "handoff_to_human": (
        "Hand the conversation to a human support agent. Use it when you cannot help, when the customer asks "
        "for a person, or when the customer is upset.",
        _schema(
            {
                "reason": {"type": "string", "minLength": 1, "maxLength": 500},
                "priority": {"type": "string", "enum": _PRIORITIES},
            },
            ["reason"],
        ),
        handoff_to_human,
    ),
    "resolve_conversation": (
        "Mark the conversation as resolved when the customer confirms the problem is solved.",
        _schema({"reason": {"type": "string", "maxLength": 500}}, []),
        resolve_conversation,
    ),
    "add_label": (
        "Add one of the support team's existing labels (a short lowercase word) to the conversation.",
        _schema({"label": {"type": "string", "pattern": "^[a-z0-9_-]{1,64}$"}}, ["label"]),
        add_label,
    ),
    "set_priority": (
        "Set the conversation's priority for the support team.",
        _schema({"priority": {"type": "string", "enum": _PRIORITIES}}, ["priority"]),
        set_priority,
    ),
    "remember": (
        "Remember a value the customer told you (one of the memory variables listed in your context) so it is "
        "known later in this and future conversations.",
        _schema(
            {
                "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,63}$"},
                "value": {"type": "string", "minLength": 1, "maxLength": 500},
            },
            ["name", "value"],
        ),
        remember,
    ),
    "add_private_note": (
        "Write a private note for the support team. The customer never sees it.",
        _schema({"note": {"type": "string", "minLength": 1, "maxLength": 2000}}, ["note"]),
        add_private_note,
    ),
}

BUILTIN_TOOL_NAMES: tuple[str, ...] = tuple(_SPECS)
# What a builder may put in a scenario's allowlist; handoff_to_human is always given, so it is not listed.
SCENARIO_TOOL_NAMES: tuple[str, ...] = tuple(n for n in _SPECS if n != "handoff_to_human")


def build_tools(names: list[str] | tuple[str, ...]) -> list[Tool]:
    """Runtime tools for the given names, in order; unknown names raise (they are validated at save time)."""
    tools = []
    for name in dict.fromkeys(names):
        description, parameters, function = _SPECS[name]
        tools.append(Tool(name=name, description=description, parameters=parameters, function=function))
    return tools
