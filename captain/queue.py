"""A Celery task by its registered name, for the services that queue work.

A task calls a service, so a service never imports a task module (that loop, hidden by imports inside functions,
is what the layers contract and the import-cycle test forbid): it names the task instead. The names are the
tasks' explicit `name=` (`captain.tasks.<function>`, kept stable for queued messages); `CaptainConfig.ready`
imports `captain.tasks`, so every process that can queue has them registered, and the task object found here is
the one the decorator made (its options, `task_always_eager` and test doubles apply as before).
"""

from __future__ import annotations

from celery import Task, current_app


def task(name: str) -> Task:
    """The task registered as `name`; KeyError for a name no task carries (tests check every name used)."""
    return current_app.tasks[name]
