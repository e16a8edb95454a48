"""Celery tasks of actions: publishing shortcuts as channel commands."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="captain.tasks.sync_telegram_commands", acks_late=True)
def sync_telegram_commands(assistant_id: int) -> int:
    """Set the Telegram command menu of the assistant's bots to its enabled shortcuts (queued when a shortcut
    is saved or deleted). Idempotent: the menu is replaced as a whole from the current rows."""
    from captain.actions.services.shortcuts import command_menu_sync

    return command_menu_sync(assistant_id=assistant_id)
