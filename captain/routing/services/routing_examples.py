"""Example messages the product proposes for routing nodes: which ones the router uses, and their review.

The builder's own examples (`RoutingNode.examples`) always win. A drafted phrase is used once a person accepted
it; an unreviewed one only with `CAPTAIN["ROUTING_UNREVIEWED_DRAFTS"]` and only for a node the builder has
written none for. Corrections are used once an administrator accepted them, next to whatever else the node has.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from captain.assistants.models import Assistant
from captain.conf import captain_setting
from captain.routing.models import RoutingExample, RoutingNode

Status = RoutingExample.Status
Source = RoutingExample.Source


def examples_in_use(assistant: Assistant) -> dict[str, list[str]]:
    """Node key -> the example messages the router compares customers' messages with, builder's first."""
    builder = {
        key: [str(e) for e in examples if str(e).strip()]
        for key, examples in RoutingNode.objects.filter(assistant=assistant).values_list("key", "examples")
    }
    result: dict[str, list[str]] = {key: list(texts) for key, texts in builder.items() if texts}
    unreviewed = bool(captain_setting("ROUTING_UNREVIEWED_DRAFTS"))
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


def review_examples(*, assistant: Assistant, ids: Iterable[int], accept: bool, key: str | None = None) -> int:
    """Accept or reject the assistant's proposed examples `ids` (others' ids are ignored). `key` moves them to
    another node as they are accepted (a correction whose right node the reviewer chose). Returns how many
    changed."""
    with transaction.atomic():
        rows = RoutingExample.objects.select_for_update().filter(assistant=assistant, id__in=list(ids))
        status = Status.ACCEPTED if accept else Status.REJECTED
        now = timezone.now()
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
