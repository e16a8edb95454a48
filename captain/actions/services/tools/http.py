"""An account's custom HTTP tools as runtime tools (`custom_tool_calls.custom_tool_call` makes the calls).

Each tool takes the account and the conversation from the run context, never from the model's arguments: the
contact's identity header comes from the conversation's contact. A tool whose method changes something carries
a `confirm` question (unless the builder marked it safe), so the runtime holds the call until the customer
agrees. In a playground run a GET runs for real (it only reads), but a change is described and not sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from captain.actions.models import CustomTool
from captain.actions.services.custom_tool_calls import contact_identity, custom_tool_call
from captain.actions.services.custom_tool_templates import (
    custom_tool_confirmation,
    custom_tool_schema,
    custom_tool_url,
)
from captain.actions.services.tools.builtin import is_dry_run
from captain.runtime import RunContext, Tool


def _function(row: CustomTool) -> Any:
    def call(ctx: RunContext, args: dict[str, Any]) -> str:
        if row.account_id != ctx.account_id:  # built for another tenant's run: never call it
            raise PermissionError("custom tool of another account")
        if row.changes_something and is_dry_run(ctx):
            return f"Playground: would send {row.method} {custom_tool_url(row, args)} (nothing was sent)"
        identity = None
        if row.identity_header:
            identity = contact_identity(account_id=ctx.account_id, conversation_id=ctx.conversation_id)
        return custom_tool_call(row, args, contact_identity=identity)

    return call


def _confirm(row: CustomTool) -> Any:
    def question(args: dict[str, Any]) -> str:
        return custom_tool_confirmation(row, args)

    return question


def custom_tools_for(account_id: int, names: Sequence[str]) -> list[Tool]:
    """Runtime tools for the account's enabled custom tools among `names`, in that order; names that are not
    one (built-in tools, deleted or disabled custom tools) are skipped."""
    wanted = list(dict.fromkeys(names))
    rows = {
        row.name: row
        for row in CustomTool.objects.filter(account_id=account_id, enabled=True, name__in=wanted)
    }
    return [
        Tool(
            name=row.name,
            description=row.description,
            parameters=custom_tool_schema(row),
            function=_function(row),
            confirm=_confirm(row) if row.needs_confirmation else None,
        )
        for row in (rows[name] for name in wanted if name in rows)
    ]
