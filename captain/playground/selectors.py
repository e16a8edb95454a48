"""Reads of playground runs (the turns a worker answers for the playground page)."""

from __future__ import annotations

from django.http import Http404

from captain.playground.models import PlaygroundRun


def playground_run_for_account(*, account_id: int, run_id: int) -> PlaygroundRun | None:
    """The account's playground run; None when there is none (pruned, its assistant deleted, another
    account's)."""
    return PlaygroundRun.objects.filter(pk=run_id, account_id=account_id).first()


def access_playground_run(*, account_id: int, run_id: int) -> PlaygroundRun:
    """The account's playground run; 404 otherwise."""
    run = playground_run_for_account(account_id=account_id, run_id=run_id)
    if run is None:
        raise Http404("No such playground run.")
    return run


def playground_run_done(*, run_id: int) -> bool:
    """Whether the worker has answered the turn."""
    return PlaygroundRun.objects.filter(pk=run_id, status=PlaygroundRun.Status.DONE).exists()
