"""Reads of plans, tool confirmations, custom tools and shortcuts.

The `*_exist` functions are for another domain's annotations: given `OuterRef`s to its rows' columns, whether
there is any such row here (`Exists`), so that domain asks without reading these models itself.
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, QuerySet

from captain.actions.models import CustomTool, Plan, Shortcut, ToolConfirmation
from captain.assistants.models import Assistant


def plan_list(*, account_id: int, conversation_id: int) -> QuerySet[Plan]:
    """A conversation's plans, newest first."""
    return Plan.objects.filter(conversation_id=conversation_id, account_id=account_id).order_by("-id")


def plans_exist(*, conversation_id: OuterRef) -> Exists:
    """Whether the conversation has any plan."""
    return Exists(Plan.objects.filter(conversation_id=conversation_id))


def tool_confirmation_list(*, account_id: int, conversation_id: int) -> QuerySet[ToolConfirmation]:
    """The tool calls the AI asked a conversation's customer to confirm, newest first."""
    return ToolConfirmation.objects.filter(conversation_id=conversation_id, account_id=account_id).order_by(
        "-id"
    )


def tool_confirmations_exist(*, conversation_id: OuterRef) -> Exists:
    """Whether the AI asked the conversation's customer to confirm any tool call."""
    return Exists(ToolConfirmation.objects.filter(conversation_id=conversation_id))


def tool_secrets_exist(*, account_id: OuterRef) -> Exists:
    """Whether any of the account's custom tools holds an (encrypted) secret."""
    return Exists(CustomTool.objects.filter(account_id=account_id).exclude(secret_encrypted=""))


def shortcut_list(*, assistant: Assistant, enabled: bool | None = None) -> QuerySet[Shortcut]:
    """An assistant's shortcuts by command; only the enabled (or disabled) ones when `enabled` is given."""
    shortcuts = Shortcut.objects.filter(assistant=assistant).order_by("command")
    return shortcuts if enabled is None else shortcuts.filter(enabled=enabled)


def shortcut_for_command(*, assistant: Assistant, command: str) -> Shortcut | None:
    """The assistant's enabled shortcut for `/command`; None when there is none (or it is disabled)."""
    return shortcut_list(assistant=assistant, enabled=True).filter(command=command).first()
