"""Example messages the product proposes for routing nodes: which ones the router uses, and their review.

The builder's own examples (`RoutingNode.examples`) always win. A drafted phrase is used once a person accepted
it; an unreviewed one only for a node the builder has written none for, and only when
`CAPTAIN["ROUTING_UNREVIEWED_DRAFTS"]` says so: True always, False never, "auto" (the default) when the product's
own check showed they help this assistant (`draft_check`). Corrections are used once an administrator accepted them, next to whatever else the node has.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from captain.assistants.models import Assistant
from captain.conf import captain_setting
from captain.queue import task
from captain.routing.models import RoutingConfig, RoutingExample, RoutingNode

Status = RoutingExample.Status
Source = RoutingExample.Source


def unreviewed_drafts_in_use(assistant: Assistant) -> bool:
    """Whether the router uses the assistant's unreviewed drafted phrases (see the module docstring)."""
    setting = captain_setting("ROUTING_UNREVIEWED_DRAFTS")
    if setting != "auto":
        return bool(setting)
    check = RoutingConfig.objects.filter(assistant=assistant).values_list("drafts_check", flat=True).first()
    return bool(check and check.get("helps"))


def examples_in_use(assistant: Assistant, *, unreviewed: bool | None = None) -> dict[str, list[str]]:
    """Node key -> the example messages the router compares customers' messages with, builder's first.
    `unreviewed`: whether to use unreviewed drafts (None: as `unreviewed_drafts_in_use` decides)."""
    builder = {
        key: [str(e) for e in examples if str(e).strip()]
        for key, examples in RoutingNode.objects.filter(assistant=assistant).values_list("key", "examples")
    }
    result: dict[str, list[str]] = {key: list(texts) for key, texts in builder.items() if texts}
    if unreviewed is None:
        unreviewed = unreviewed_drafts_in_use(assistant)
    rows = RoutingExample.objects.filter(
        assistant=assistant, status__in=[Status.SUGGESTED, Status.ACCEPTED]
    ).values_list("key", "text", "source", "status")
    for key, text, source, status in rows:
        suggested = source == Source.DRAFTED and status == Status.SUGGESTED
        if suggested and (not unreviewed or builder.get(key)):
            continue
        texts = result.setdefault(key, [])
        if text not in texts:
            texts.append(text)
    return result


def drafts_check_enqueue(*, assistant_id: int) -> None:
    """Queue the check of whether unreviewed drafts help the assistant (`draft_check`) once the current
    transaction commits: after new drafts or an accepted example. Background lane; a failed publish (broker
    down) is logged, never raised into the save that asked: the next change re-checks."""
    check = task("captain.tasks.routing_drafts_check")
    transaction.on_commit(lambda: check.delay(assistant_id), robust=True)


def review_examples(*, assistant: Assistant, ids: Iterable[int], accept: bool, key: str | None = None) -> int:
    """Accept or reject the assistant's proposed examples `ids` (others' ids are ignored). `key` moves them to
    another node as they are accepted (a correction whose right node the reviewer chose). Returns how many
    changed."""
    with transaction.atomic():
        rows = RoutingExample.objects.select_for_update().filter(assistant=assistant, id__in=list(ids))
        status = Status.ACCEPTED if accept else Status.REJECTED
        now = timezone.now()
        if accept:
            drafts_check_enqueue(assistant_id=assistant.pk)
        if not (key and accept):
            return rows.update(status=status, reviewed_at=now)
        changed = 0
        for row in rows:
            twin = (
                RoutingExample.objects.filter(assistant=assistant, key=key, text=row.text)
                .exclude(pk=row.pk)
                .first()
            )
            if twin is not None:
                # The node already has this message: accept that one instead of a duplicate.
                twin.status, twin.reviewed_at = status, now
                twin.save(update_fields=["status", "reviewed_at"])
                row.delete()
            else:
                row.key, row.status, row.reviewed_at = key, status, now
                row.save(update_fields=["key", "status", "reviewed_at"])
            changed += 1
        return changed
