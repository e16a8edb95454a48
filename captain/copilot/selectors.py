"""Reads of copilot runs (owner only)."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, QuerySet
from django.http import Http404

from captain.copilot.models import CopilotRun


def copilot_run_list(*, account_id: int, user_id: int) -> QuerySet[CopilotRun]:
    """The copilot runs `user_id` asked for in the account, newest first. A run is its asker's, not the
    account's: it holds the text they typed and what the copilot wrote for them, so no other member, not even
    an administrator, lists it. A run whose asker was deleted is nobody's."""
    return CopilotRun.objects.filter(account_id=account_id, user_id=user_id).order_by("-id")


def access_copilot_run(*, account_id: int, user_id: int, run_id: int) -> CopilotRun:
    """The run if `user_id` asked for it in the account; 404 otherwise (another member's run too: never 403,
    so an id does not tell that someone else asked for something)."""
    run = copilot_run_list(account_id=account_id, user_id=user_id).filter(pk=run_id).first()
    if run is None:
        raise Http404("No such copilot run.")
    return run


def copilot_runs_for_conversation(
    *, account_id: int, user_id: int, conversation_id: int, limit: int
) -> list[CopilotRun]:
    """The newest `limit` copilot runs `user_id` asked for in a conversation (their own only, as
    `copilot_run_list`), with the asker: one query."""
    return list(
        copilot_run_list(account_id=account_id, user_id=user_id)
        .filter(conversation_id=conversation_id)
        .select_related("user")[:limit]
    )


def copilot_runs_exist(*, conversation_id: OuterRef) -> Exists:
    """Whether anyone asked the copilot for anything in the conversation: for another domain's annotation
    (`conversation_id` an `OuterRef` to its rows' conversation), so a conversation without runs costs no query
    for them. Only a yes/no: a run is read through `copilot_run_list`, by its asker."""
    return Exists(CopilotRun.objects.filter(conversation_id=conversation_id))


def copilot_run_finished(*, run_id: int) -> bool:
    """Whether the run is over (done or failed): a live stream whose `end` was lost still ends."""
    return CopilotRun.objects.filter(
        pk=run_id, status__in=[CopilotRun.Status.DONE, CopilotRun.Status.FAILED]
    ).exists()
