"""Shortcuts: quick commands a customer types (`/track 12345`), and the writes that manage them.

Recognising a command (`shortcut_invocation`) accepts the forms customers' channels produce: `/track 12345`,
`/track@MyBot 12345` (Telegram groups address one bot), `/track order_id=12345`, quoted values
(`/note "two words" more`), the full-width slash (U+FF0F) of Chinese keyboards, and a leading Slack mention
(`<@U0LAN0Z89> /track 12345`). An unknown or disabled command is no shortcut: the message is then an ordinary
customer message. Positional values fill the parameters in order; the last parameter takes the rest of the text.

What a shortcut does for one turn (`shortcut_result`):
- a required parameter is missing: a fixed reply that shows the form ("/track needs: order_id (Your order
  number)"), no model call;
- `message`: the template filled with the values, as a fixed reply (no model, no credit);
- `tool`: the named built-in tool runs with the rendered arguments, validated against its JSON schema, and its
  result becomes a prompt block for the team ("The customer used the shortcut /track with order_id=12345. Result
  of faq_lookup: ..."). A failed tool gives a block that says so, so the model answers honestly.

Templates are `{name}` placeholders over the declared parameters, nothing else (`{{` and `}}` are literal
braces): no attribute access, indexing, conversion or format spec, so a customer's value is only ever data.
Values are substituted once and never read as a template again.

Writes (`shortcut_create` / `shortcut_update` / `shortcut_delete`) check everything `shortcut_errors` checks and,
after commit, queue the command menu sync for the assistant's inboxes whose channel has a command menu
(helpdesk.services.inbox_channel).
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

import jsonschema
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.http import Http404

from captain.actions.models import Shortcut, validate_shortcut_command
from captain.actions.services.tools import BUILTIN_TOOL_NAMES, build_tools
from captain.assistants.models import TRIAGE_KEY, Assistant, Scenario
from captain.assistants.services.agents.builder import TRIAGE_TOOLS
from captain.assistants.services.builder import FieldErrors, raise_field_errors
from captain.queue import task
from captain.runtime import Reply, RunContext, RunResult, ToolOutput, Usage
from helpdesk.models import Inbox, Message
from helpdesk.services.inbox_channel import command_menu_channel_types, inbox_set_commands

logger = logging.getLogger(__name__)

MAX_PARAMETERS = 10
MAX_VALUE_CHARS = 500
"""A value longer than this is refused with a reply that says so (it is a command argument, not a letter)."""
MAX_TEMPLATE_CHARS = 4000
MAX_RESULT_CHARS = 4000
"""The tool result put into the prompt is cut here: one lookup must not crowd out the conversation."""
PARAMETER_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
PARAMETER_KEYS = frozenset({"name", "description", "required"})

# Tools that end the turn with an outcome of their own (a handoff, a resolution) are decisions for the model or
# for people; a shortcut runs before the model and only gathers facts or makes small changes.
ENDING_TOOLS = frozenset({"handoff_to_human", "resolve_conversation"})

MAX_DESCRIPTION_CHARS = 256
"""What a command menu shows of a description (the strictest channel's limit)."""


# ---- templates -------------------------------------------------------------------------------------------------

# `{{` and `}}` are literal braces; `{...}` is a field; a lone brace is an error (found by validation).
_TEMPLATE_PIECE = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


def template_errors(template: str, names: set[str] | frozenset[str]) -> list[str]:
    """Why `template` is not a valid shortcut template over the parameters `names` ([] when it is)."""
    errors: list[str] = []
    for match in _TEMPLATE_PIECE.finditer(template):
        piece = match.group(0)
        if piece in ("{{", "}}"):
            continue
        inner = match.group(1)
        if inner is None:
            errors.append(f"A lone '{piece}': write '{piece}{piece}' for a literal brace.")
        elif inner not in names:
            declared = ", ".join(sorted(names)) or "none"
            errors.append(
                f"'{{{inner}}}' is not a declared parameter (declared: {declared}). Only '{{name}}' is allowed: "
                "no attributes, indexes or formats."
            )
    return list(dict.fromkeys(errors))


def render_template(template: str, values: Mapping[str, str]) -> str:
    """`template` with each `{name}` replaced by its value (an absent optional parameter: empty). The values are
    inserted as text once: braces in a customer's value are never read as fields."""

    def piece(match: re.Match[str]) -> str:
        text = match.group(0)
        if text in ("{{", "}}"):
            return text[0]
        inner = match.group(1)
        if inner is None:
            return text  # refused at save time; kept literally if an old row has one
        return values.get(inner, "") if _is_parameter_name(inner) else text

    return _TEMPLATE_PIECE.sub(piece, template)


def _is_parameter_name(name: str) -> bool:
    return bool(PARAMETER_NAME_RE.match(name))


def _placeholders(template: str) -> set[str]:
    return {m.group(1) for m in _TEMPLATE_PIECE.finditer(template) if m.group(1) is not None}


# ---- recognising a command ---------------------------------------------------------------------------------------

# Slack puts the bot's mention first in a channel message: `<@U0LAN0Z89> /track 12345`.
_SLACK_MENTION = re.compile(r"^\s*<@[A-Z0-9]+(?:\|[^>]*)?>")
_COMMAND = re.compile(r"^/([a-z0-9_]{1,32})(?:@([a-z0-9_]{1,64}))?$")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]{0,31})[=\uff1d]")
_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "「": "」", "『": "』", "«": "»"}


@dataclass(frozen=True)
class Invocation:
    """A customer message that is a known, enabled shortcut command."""

    shortcut: Shortcut
    values: dict[str, str]
    """The parameter values given, by parameter name (empty values are left out)."""
    missing: tuple[str, ...] = ()
    """Required parameters without a value, in declaration order."""
    too_long: tuple[str, ...] = ()
    """Parameters whose value exceeds MAX_VALUE_CHARS."""
    bot: str = ""
    """The bot a Telegram group command was addressed to (`/track@MyBot`), lowercased; empty otherwise."""

    @property
    def complete(self) -> bool:
        return not self.missing and not self.too_long


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    value: str
    key: str | None


def split_command(text: str) -> tuple[str, str, str] | None:
    """(command, bot, rest) when `text` starts with a command in any channel's form; None otherwise."""
    mention = _SLACK_MENTION.match(text)
    if mention:
        text = text[mention.end() :]
    text = text.lstrip()
    if not text or text[0] not in "/\uff0f":
        return None
    head, _, rest = _split_first(text)
    # NFKC folds the full-width forms of a Chinese or Japanese keyboard (slash, letters, @) to ASCII.
    match = _COMMAND.match(unicodedata.normalize("NFKC", head).lower())
    if match is None:
        return None
    return match.group(1), match.group(2) or "", rest


def _split_first(text: str) -> tuple[str, str, str]:
    for index, char in enumerate(text):
        if char.isspace():
            return text[:index], char, text[index + 1 :]
    return text, "", ""


def _tokens(rest: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(rest)
    while i < n:
        while i < n and rest[i].isspace():
            i += 1
        if i >= n:
            break
        start = i
        key = None
        keyed = _KEY.match(rest, i)
        if keyed:
            key = keyed.group(1).lower()
            i = keyed.end()
        if i < n and rest[i] in _QUOTES:
            close = rest.find(_QUOTES[rest[i]], i + 1)
            if close == -1:  # an unclosed quote takes the rest of the text
                value, i = rest[i + 1 :], n
            else:
                value, i = rest[i + 1 : close], close + 1
        else:
            j = i
            while j < n and not rest[j].isspace():
                j += 1
            value, i = rest[i:j], j
        tokens.append(_Token(start, i, value, key))
    return tokens


def parse_values(parameters: list[dict[str, Any]], rest: str) -> dict[str, str]:
    """The values `rest` gives the declared `parameters`: `name=value` first, then positional values in
    declaration order; the last parameter still open takes the rest of the text."""
    declared = [str(p.get("name", "")) for p in parameters if isinstance(p, dict)]
    named: dict[str, str] = {}
    positional: list[_Token] = []
    for token in _tokens(rest):
        if token.key is not None and token.key in declared and token.key not in named:
            named[token.key] = token.value
        else:
            # `a=b` for an undeclared name is plain text (`/feedback 2+2=4`), so its raw text is the value.
            positional.append(
                token
                if token.key is None
                else _Token(token.start, token.end, rest[token.start : token.end], None)
            )
    free = [name for name in declared if name not in named]
    values = dict(named)
    for index, name in enumerate(free):
        if index >= len(positional):
            break
        if index == len(free) - 1:
            remaining = positional[index:]
            values[name] = (
                remaining[0].value if len(remaining) == 1 else rest[remaining[0].start : remaining[-1].end]
            )
        else:
            values[name] = positional[index].value
    return {name: value.strip() for name, value in values.items() if value.strip()}


def shortcut_invocation(assistant: Assistant, text: str) -> Invocation | None:
    """The enabled shortcut of `assistant` that `text` invokes, with its values; None for any other text."""
    split = split_command(text or "")
    if split is None:
        return None
    command, bot, rest = split
    # Telegram lists commands lowercase and matches them case-insensitively; we store them lowercase.
    shortcut = Shortcut.objects.filter(assistant=assistant, command=command, enabled=True).first()
    if shortcut is None:
        return None
    parameters = shortcut_parameters(shortcut)
    values = parse_values(parameters, rest)
    missing = tuple(p["name"] for p in parameters if p.get("required") and p["name"] not in values)
    too_long = tuple(name for name, value in values.items() if len(value) > MAX_VALUE_CHARS)
    return Invocation(shortcut=shortcut, values=values, missing=missing, too_long=too_long, bot=bot)


def shortcut_parameters(shortcut: Shortcut) -> list[dict[str, Any]]:
    """The shortcut's well-formed parameter declarations (validated at save time; a bad row is skipped)."""
    raw = shortcut.parameters if isinstance(shortcut.parameters, list) else []
    return [p for p in raw if isinstance(p, dict) and _is_parameter_name(str(p.get("name", "")))]


def shortcut_command_text(shortcut: Shortcut, values: Mapping[str, str]) -> str:
    """The message a customer would type for these values (the playground's parameter form sends it): values
    in order while none is skipped, then `name=value`; values with spaces or quotes are quoted."""
    parts = [f"/{shortcut.command}"]
    positional = True
    for parameter in shortcut_parameters(shortcut):
        name = parameter["name"]
        value = " ".join(str(values.get(name, "")).split())
        if not value:
            positional = False
            continue
        quoted = _quote(value)
        parts.append(quoted if positional else f"{name}={quoted}")
    return " ".join(parts)


def _quote(value: str) -> str:
    if not any(c.isspace() or c in "=\uff1d" for c in value) and value[0] not in _QUOTES:
        return value
    for opening, closing in _QUOTES.items():
        if closing not in value:
            return f"{opening}{value}{closing}"
    return value


# ---- what an invocation does ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShortcutResult:
    """What a shortcut does to one turn: end it with a fixed reply, or give the team a prompt block."""

    reply_text: str | None
    """A fixed reply (the form of a missing parameter, a message shortcut): the turn ends without the model."""
    prompt_block: str | None
    """Text for the team's system prompt (a tool shortcut's result): the model answers with it."""
    record: dict[str, Any] = field(default_factory=dict)
    """What happened, for the run's debug log: command, action, values, status, tool, error."""


def form_text(shortcut: Shortcut) -> str:
    """The fixed reply naming the required parameters: "/track needs: order_id (Your order number)"."""
    needed = []
    for parameter in shortcut_parameters(shortcut):
        if parameter.get("required"):
            description = str(parameter.get("description") or "").strip()
            needed.append(f"{parameter['name']} ({description})" if description else parameter["name"])
    return f"/{shortcut.command} needs: {', '.join(needed)}"


def _described_values(values: Mapping[str, str]) -> str:
    parts = []
    for name, value in values.items():
        flat = " ".join(value.split())  # a value never adds lines to the system prompt
        parts.append(
            f"{name}={flat}"
            if re.fullmatch(r"[\w.@#:/+-]+", flat)
            else f"{name}={json.dumps(flat, ensure_ascii=False)}"
        )
    return ", ".join(parts)


def shortcut_result(invocation: Invocation, *, context: RunContext) -> ShortcutResult:
    """Carry out an invocation for one turn. Never raises for a tool's failure: the block says it failed."""
    shortcut = invocation.shortcut
    record: dict[str, Any] = {
        "command": shortcut.command,
        "action": shortcut.action,
        "values": dict(invocation.values),
    }
    if invocation.missing or invocation.too_long:
        text = form_text(shortcut) if invocation.missing else ""
        if invocation.too_long:
            longest = ", ".join(invocation.too_long)
            text = "\n".join(
                t
                for t in (
                    text,
                    f"/{shortcut.command}: {longest} is too long (at most {MAX_VALUE_CHARS} characters).",
                )
                if t
            )
        record |= {
            "status": "incomplete",
            "missing": list(invocation.missing),
            "too_long": list(invocation.too_long),
        }
        return ShortcutResult(reply_text=text, prompt_block=None, record=record)
    if shortcut.action == Shortcut.Action.MESSAGE:
        record["status"] = "message"
        return ShortcutResult(
            reply_text=render_template(shortcut.message_template, invocation.values).strip()
            or form_text(shortcut),
            prompt_block=None,
            record=record,
        )
    return _tool_result(invocation, context=context, record=record)


def _tool_result(invocation: Invocation, *, context: RunContext, record: dict[str, Any]) -> ShortcutResult:
    shortcut = invocation.shortcut
    tool_name = shortcut.tool_name
    used = f"The customer used the shortcut /{shortcut.command}"
    if invocation.values:
        used += f" with {_described_values(invocation.values)}"
    record["tool"] = tool_name
    try:
        output = _run_tool(shortcut, invocation.values, context=context)
    except ShortcutToolFailed as exc:
        record |= {"status": "failed", "error": str(exc)}
        return ShortcutResult(
            reply_text=None,
            prompt_block=(
                f"{used}, but the lookup with {tool_name} failed, so there is no result. Tell the customer "
                "honestly that it could not be looked up right now; do not invent a result."
            ),
            record=record,
        )
    record["status"] = "ok"
    if len(output) > MAX_RESULT_CHARS:
        output = output[:MAX_RESULT_CHARS] + "…"
    return ShortcutResult(
        reply_text=None,
        prompt_block=f"{used}. Result of {tool_name}:\n{output}\nAnswer the customer's request with this result.",
        record=record,
    )


class ShortcutToolFailed(Exception):
    """The shortcut's tool could not run or failed; the message is for the debug log, never the customer."""


def _run_tool(shortcut: Shortcut, values: Mapping[str, str], *, context: RunContext) -> str:
    assistant_id = context.extra.get("assistant_id", shortcut.assistant_id)
    if shortcut.tool_name not in shortcut_tool_names(assistant_id=assistant_id):
        raise ShortcutToolFailed(f"the tool {shortcut.tool_name!r} is not available to this assistant's team")
    (tool,) = build_tools([shortcut.tool_name])
    templates = shortcut.tool_arguments if isinstance(shortcut.tool_arguments, dict) else {}
    arguments = {name: render_template(str(t), values).strip() for name, t in templates.items()}
    # An optional argument whose parameters were not given is left out rather than sent empty.
    required = set(tool.parameters.get("required", []))
    arguments = {name: value for name, value in arguments.items() if value or name in required}
    validator = jsonschema.Draft202012Validator(tool.parameters)
    error = next(iter(validator.iter_errors(arguments)), None)
    if error is not None:
        raise ShortcutToolFailed(f"invalid arguments: {error.message}")
    try:
        output = tool.function(context, arguments)
    except Exception as exc:  # a tool's bug must not cost the customer the answer
        logger.exception("shortcut /%s: tool %s failed", shortcut.command, tool.name)
        raise ShortcutToolFailed(f"{type(exc).__name__} in {tool.name}") from exc
    return output.content if isinstance(output, ToolOutput) else str(output)


def shortcut_for_message(*, assistant: Assistant, text: str, context: RunContext) -> ShortcutResult | None:
    """The shortcut a customer message invokes, carried out; None for an ordinary message."""
    invocation = shortcut_invocation(assistant, text)
    if invocation is None:
        return None
    return shortcut_result(invocation, context=context)


def shortcut_for_batch(
    *, assistant: Assistant, message_ids: list[int], context: RunContext
) -> ShortcutResult | None:
    """The shortcut a run's batch invokes: its newest customer message decides (a command followed by "thanks"
    in the same burst is an ordinary turn, the model reads both)."""
    newest = (
        Message.objects.filter(pk__in=message_ids, message_type=Message.Type.INCOMING)
        .order_by("-created_at", "-id")
        .values_list("content", flat=True)
        .first()
    )
    if not newest:
        return None
    return shortcut_for_message(assistant=assistant, text=newest, context=context)


def shortcut_reply_result(result: ShortcutResult, *, agent_key: str) -> RunResult:
    """The run's result for a shortcut's fixed reply, in the name of the agent in charge: no model was called,
    so it is not billable."""
    return RunResult(
        outcome=Reply(result.reply_text or "", billable=False),
        agent_key=agent_key,
        usage=Usage(),
        route=[agent_key],
    )


def agent_name(assistant: Assistant, agent_key: str) -> str:
    """The name a reply of `agent_key` is sent under (the assistant, or one of its scenarios)."""
    if agent_key == TRIAGE_KEY:
        return assistant.name
    title = (
        Scenario.objects.filter(assistant=assistant, key=agent_key).values_list("title", flat=True).first()
    )
    return title or assistant.name


# ---- validation -------------------------------------------------------------------------------------------------


def shortcut_tool_names(*, assistant_id: int) -> list[str]:
    """Tools a shortcut of this assistant may run: those its team may use (the triage tools and its enabled
    scenarios' allowlists), without the ones that end the turn."""
    names = list(TRIAGE_TOOLS)
    for tools in Scenario.objects.filter(assistant_id=assistant_id, enabled=True).values_list(
        "tools", flat=True
    ):
        names.extend(t for t in (tools or []) if isinstance(t, str))
    return [n for n in dict.fromkeys(names) if n in BUILTIN_TOOL_NAMES and n not in ENDING_TOOLS]


class ShortcutFields(TypedDict, total=False):
    """What a builder writes on a shortcut."""

    command: str
    """Lowercase letters, digits and _, starting with a letter, at most 32 (Telegram's rule)."""
    description: str
    """1-256 characters: the command menu and the playground show it."""
    parameters: list[dict[str, Any]]
    """`[{"name", "description", "required"}]`: the form the customer fills, in positional order."""
    action: str
    """`tool` or `message`."""
    tool_name: str
    tool_arguments: dict[str, str]
    """The tool's arguments, each a template over the parameters."""
    message_template: str
    enabled: bool


SHORTCUT_FIELDS: tuple[str, ...] = tuple(ShortcutFields.__annotations__)


def _parameter_errors(parameters: Any) -> tuple[list[str], set[str]]:
    """(errors, declared names) of a parameters value."""
    if not isinstance(parameters, list):
        return ['A list of {"name", "description", "required"} objects.'], set()
    errors: list[str] = []
    names: set[str] = set()
    if len(parameters) > MAX_PARAMETERS:
        errors.append(f"At most {MAX_PARAMETERS} parameters.")
    for position, parameter in enumerate(parameters, start=1):
        if not isinstance(parameter, dict):
            errors.append(f"Parameter {position}: an object with name, description and required.")
            continue
        unknown = sorted(set(parameter) - PARAMETER_KEYS)
        if unknown:
            errors.append(f"Parameter {position}: unknown key(s) {', '.join(map(str, unknown))}.")
        name = parameter.get("name")
        if not isinstance(name, str) or not PARAMETER_NAME_RE.match(name):
            errors.append(
                f"Parameter {position}: name must be lowercase letters, digits and _, starting with a letter "
                "(at most 32)."
            )
        elif name in names:
            errors.append(f"Parameter {position}: '{name}' is declared twice.")
        else:
            names.add(name)
        description = parameter.get("description", "")
        if not isinstance(description, str) or len(description) > 200:
            errors.append(f"Parameter {position}: description must be text of at most 200 characters.")
        if not isinstance(parameter.get("required", False), bool):
            errors.append(f"Parameter {position}: required must be true or false.")
    return errors, names


def _tool_argument_errors(
    tool_name: str, arguments: Any, names: set[str], *, assistant_id: int | None
) -> tuple[list[str], list[str]]:
    """(errors of tool_name, errors of tool_arguments)."""
    allowed = shortcut_tool_names(assistant_id=assistant_id) if assistant_id else list(TRIAGE_TOOLS)
    if tool_name not in allowed:
        return [
            f"Not a tool this assistant's team may use: {tool_name or '(none)'}. Allowed: {', '.join(allowed)} "
            "(give a scenario the tool first; handing off and resolving are the model's decisions)."
        ], []
    if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
        return [], ['An object of argument name -> template text, e.g. {"query": "order {order_id}"}.']
    (tool,) = build_tools([tool_name])
    properties: dict[str, Any] = tool.parameters.get("properties", {})
    errors: list[str] = []
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        errors.append(
            f"{tool_name} has no argument(s) {', '.join(unknown)} (it takes: {', '.join(properties)})."
        )
    missing = [
        name for name in tool.parameters.get("required", []) if not str(arguments.get(name, "")).strip()
    ]
    if missing:
        errors.append(f"{tool_name} needs: {', '.join(missing)}.")
    for name, template in arguments.items():
        errors.extend(f"{name}: {e}" for e in template_errors(template, names))
        if name in properties and not _placeholders(template) and template.strip():
            # A fixed value is checked now, not when a customer first uses the shortcut.
            error = next(
                iter(jsonschema.Draft202012Validator(properties[name]).iter_errors(template.strip())), None
            )
            if error is not None:
                errors.append(f"{name}: {error.message}")
    return [], errors


def shortcut_errors(
    *, assistant: Assistant | None, fields: Mapping[str, Any], shortcut: Shortcut | None = None
) -> FieldErrors:
    """Why a shortcut with these (complete) fields cannot be stored; {} when it can."""
    errors: FieldErrors = {}
    command = str(fields.get("command") or "")
    try:
        validate_shortcut_command(command)
    except ValidationError as exc:
        errors["command"] = list(exc.messages)
    else:
        if assistant is not None and assistant.pk:
            taken = Shortcut.objects.filter(assistant=assistant, command=command)
            if shortcut is not None and shortcut.pk:
                taken = taken.exclude(pk=shortcut.pk)
            if taken.exists():
                errors["command"] = [f"This assistant already has the shortcut /{command}."]
    description = str(fields.get("description") or "")
    if not description.strip() or len(description) > MAX_DESCRIPTION_CHARS:
        errors["description"] = [f"1 to {MAX_DESCRIPTION_CHARS} characters (the command menu shows it)."]
    parameter_errors, names = _parameter_errors(fields.get("parameters", []))
    errors["parameters"] = parameter_errors
    action = fields.get("action", Shortcut.Action.TOOL)
    if action == Shortcut.Action.MESSAGE:
        template = str(fields.get("message_template") or "")
        if not template.strip():
            errors["message_template"] = ["A message shortcut needs the text to send."]
        elif len(template) > MAX_TEMPLATE_CHARS:
            errors["message_template"] = [f"At most {MAX_TEMPLATE_CHARS} characters."]
        else:
            errors["message_template"] = template_errors(template, names)
    elif action == Shortcut.Action.TOOL:
        errors["tool_name"], errors["tool_arguments"] = _tool_argument_errors(
            str(fields.get("tool_name") or ""),
            fields.get("tool_arguments", {}),
            names,
            assistant_id=assistant.pk if assistant is not None else None,
        )
    else:
        errors["action"] = [f"One of: {', '.join(Shortcut.Action.values)}."]
    return {name: messages for name, messages in errors.items() if messages}


def validate_shortcut(shortcut: Shortcut) -> None:
    """Raise `ValidationError({field: [...]})` unless the shortcut (as it stands) may be stored."""
    assistant = shortcut.assistant if shortcut.assistant_id else None
    raise_field_errors(
        shortcut_errors(
            assistant=assistant,
            fields={name: getattr(shortcut, name) for name in SHORTCUT_FIELDS},
            shortcut=shortcut,
        )
    )


# ---- writes and reads -------------------------------------------------------------------------------------------


def _only_shortcut_fields(fields: Mapping[str, Any]) -> None:
    unknown = sorted(set(fields) - set(SHORTCUT_FIELDS))
    if unknown:
        raise TypeError(f"Not a shortcut field: {', '.join(unknown)}")


def _duplicate(command: str) -> ValidationError:
    return ValidationError({"command": [f"This assistant already has the shortcut /{command}."]})


def shortcut_create(*, assistant: Assistant, **fields: Unpack[ShortcutFields]) -> Shortcut:
    """A new shortcut of `assistant`, checked as a whole; the command menus follow after commit."""
    _only_shortcut_fields(fields)
    shortcut = Shortcut(assistant=assistant, **fields)
    validate_shortcut(shortcut)
    try:
        with transaction.atomic():
            shortcut.save()
            command_menu_sync_enqueue(assistant_id=assistant.pk)
    except IntegrityError as exc:  # a concurrent create took the command between our check and our insert
        raise _duplicate(shortcut.command) from exc
    return shortcut


def shortcut_update(*, shortcut: Shortcut, **fields: Unpack[ShortcutFields]) -> Shortcut:
    """Write the given fields; the shortcut is checked as it will be stored."""
    _only_shortcut_fields(fields)
    for name, value in fields.items():
        setattr(shortcut, name, value)
    validate_shortcut(shortcut)
    try:
        with transaction.atomic():
            shortcut.save()
            command_menu_sync_enqueue(assistant_id=shortcut.assistant_id)
    except IntegrityError as exc:
        raise _duplicate(shortcut.command) from exc
    return shortcut


def shortcut_delete(*, shortcut: Shortcut) -> None:
    with transaction.atomic():
        assistant_id = shortcut.assistant_id
        shortcut.delete()
        command_menu_sync_enqueue(assistant_id=assistant_id)


def shortcut_list(*, assistant: Assistant) -> QuerySet[Shortcut]:
    return Shortcut.objects.filter(assistant=assistant).order_by("command")


def access_shortcut(*, assistant: Assistant, shortcut_id: int) -> Shortcut:
    """A shortcut of an assistant already obtained through `access_assistant`; 404 otherwise."""
    shortcut = shortcut_list(assistant=assistant).filter(pk=shortcut_id).first()
    if shortcut is None:
        raise Http404("No such shortcut.")
    return shortcut


# ---- the command menu -------------------------------------------------------------------------------------------


def _command_menu_inboxes(assistant_id: int) -> QuerySet[Inbox]:
    return Inbox.objects.filter(
        captain_assistant__assistant_id=assistant_id, channel_type__in=command_menu_channel_types()
    ).order_by("id")


def command_menu_sync_enqueue(*, assistant_id: int) -> bool:
    """Queue the command menu sync once the current transaction commits; False when the assistant answers no
    inbox with a command menu. A failed publish is logged, never raised into the save that asked."""
    if not _command_menu_inboxes(assistant_id).exists():
        return False
    sync_telegram_commands = task("captain.tasks.sync_telegram_commands")
    transaction.on_commit(lambda: sync_telegram_commands.delay(assistant_id), robust=True)
    return True


def command_menu(*, assistant_id: int) -> list[tuple[str, str]]:
    """(command, description) of the assistant's enabled shortcuts, by command; the channel applies its
    provider's limits (helpdesk.services.inbox_channel.inbox_set_commands)."""
    return list(
        Shortcut.objects.filter(assistant_id=assistant_id, enabled=True)
        .order_by("command")
        .values_list("command", "description")
    )


def command_menu_sync(*, assistant_id: int) -> int:
    """Set the command menu of every inbox of the assistant that has one; returns how many took it."""
    commands = command_menu(assistant_id=assistant_id)
    synced = 0
    for inbox in _command_menu_inboxes(assistant_id):
        result = inbox_set_commands(inbox, commands)
        if result.ok:
            synced += 1
        else:
            logger.warning("Command menu of inbox %s not set: %s", inbox.pk, result.error)
    return synced
