"""Celery tasks of routing: drafting examples for scenarios."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="captain.tasks.draft_routing_examples", acks_late=True, reject_on_worker_lost=True)
def draft_routing_examples(scenario_id: int, force: bool = False) -> int:
    """Draft routing examples for a scenario's node (captain.routing.services.example_drafts); no credits charged.
    Idempotent: drafts of the scenario's current texts are not written twice unless `force`."""
    from captain.routing.services.example_drafts import example_drafts_run

    return example_drafts_run(scenario_id=scenario_id, force=force)


@shared_task(name="captain.tasks.routing_example_drafts_sweep", acks_late=True)
def routing_example_drafts_sweep() -> int:
    """Periodic (beat): queue drafting for enabled scenarios without drafts of their current texts."""
    from captain.routing.services.example_drafts import example_drafts_sweep

    return example_drafts_sweep()


@shared_task(name="captain.tasks.routing_drafts_check", acks_late=True)
def routing_drafts_check(assistant_id: int) -> bool | None:
    """Whether unreviewed drafted phrases help the assistant's router (captain.routing.services.draft_check);
    the verdict is kept on its routing configuration. No model call, no credits."""
    from captain.routing.services.draft_check import drafts_check_run

    return drafts_check_run(assistant_id=assistant_id)
