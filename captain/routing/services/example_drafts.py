"""Drafted routing examples: the assistant's own model writes customer-style messages for a scenario's routing node
from the scenario's title, description and instruction, so the semantic router has phrases to compare customers'
messages with even when the builder wrote none (docs/routing.md).

- Stored as `RoutingExample(source=drafted, status=suggested, drafted_from=<sha256 of the three texts>)`. The
  router uses one once a person accepts it (or adopts the drafts as the builder's examples); unreviewed ones only
  with `CAPTAIN["ROUTING_UNREVIEWED_DRAFTS"]` and while the node has no builder-written examples
  (`routing_examples.examples_in_use`). The builder sees them as editable suggestions (admin, API).
- When: after a scenario is created, its title/description/instruction change or it is enabled again
  (`scenario_create` / `scenario_update` queue `example_drafts_enqueue` after commit), also for a node with
  builder examples (the drafts are then only suggestions to adopt); by the hourly sweep and by
  `manage.py captain_draft_examples` for enabled scenarios whose node has neither drafts of the current texts
  nor builder examples; on request (API). Drafting is skipped when drafted rows of the node already carry the
  current hash (nothing changed); a request (`force`) drafts anyway.
- Languages: accounts have no language setting, so drafts are written in ROUTING_EXAMPLE_LANGUAGES (default
  English and Chinese) plus the language the scenario is written in, ROUTING_EXAMPLE_DRAFTS_PER_LANGUAGE each.
- A redraft replaces the node's *suggested* drafts only: accepted and rejected drafts and corrections stay, and a
  text the node already has (a rejected one included, or one of the builder's) is not stored again. A text that
  is an example of another node of the assistant (case, blanks and punctuation aside) is dropped: one phrase
  pointing at two nodes only blurs both.
- Failures (model unavailable, HTTP error, an answer with no usable example) are logged as warnings and store
  nothing (the node keeps its earlier drafts until a redraft succeeds); nothing is raised to the caller. Like FAQ
  drafts, drafting costs the account no credits (captain.assistants.services.drafting).

What the model is asked and how its answer is read (no database; the routing benchmark uses the same) is
`example_draft_prompt`; this module drafts for a scenario, stores the drafts, sweeps and reviews them.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import redis
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from captain.assistants.models import Assistant, Scenario
from captain.assistants.services.drafting import DraftingModel
from captain.assistants.services.model_endpoints import EndpointUnavailable
from captain.conf import captain_setting
from captain.queue import task
from captain.routing.models import RoutingExample, RoutingNode
from captain.routing.services.example_draft_prompt import (
    EXAMPLES_SCHEMA,
    TEMPERATURE,
    draft_languages,
    draft_request,
    example_key,
    parse_examples,
)
from captain.routing.services.routing import routing_node_examples_set
from captain.routing.services.routing_examples import drafts_check_enqueue, review_examples
from captain.runtime.model import ModelError

logger = logging.getLogger(__name__)

Source = RoutingExample.Source
Status = RoutingExample.Status

DRAFTED_FROM_FIELDS = ("title", "description", "instruction")
"""The scenario texts drafts are written from: a change to one of them calls for new drafts."""
OTHER_NODES_IN_PROMPT = 30
SWEEP_RETRY_HOURS = 6
"""The sweep queues a scenario at most once per this period for the same texts, so a scenario whose drafting
keeps failing (or keeps finding only duplicates) costs one model call per period, not one per sweep."""


def scenario_texts_hash(scenario: Scenario) -> str:
    """sha256 of the texts drafts are written from; stored as `drafted_from` on each draft."""
    return _texts_hash(*(getattr(scenario, name) for name in DRAFTED_FROM_FIELDS))


def _texts_hash(*texts: str) -> str:
    # A separator no builder types, so ("ab", "c") and ("a", "bc") differ.
    return hashlib.sha256("\x1f".join(texts).encode()).hexdigest()


# ---- drafting -----------------------------------------------------------------------------------------------


def _other_nodes(scenario: Scenario) -> tuple[list[str], set[str]]:
    """(titles of the assistant's other enabled scenarios, keys of every example of the assistant's other
    nodes: the builder's, drafted and corrections, whatever their status)."""
    others = Scenario.objects.filter(assistant_id=scenario.assistant_id, enabled=True).exclude(pk=scenario.pk)
    titles = list(others.order_by("id").values_list("title", flat=True)[:OTHER_NODES_IN_PROMPT])
    taken: set[str] = set()
    nodes = RoutingNode.objects.filter(assistant_id=scenario.assistant_id).exclude(key=scenario.key)
    for examples in nodes.values_list("examples", flat=True):
        taken.update(example_key(str(text)) for text in examples or [])
    proposed = RoutingExample.objects.filter(assistant_id=scenario.assistant_id).exclude(key=scenario.key)
    taken.update(example_key(text) for text in proposed.values_list("text", flat=True))
    return titles, taken


def draft_examples(scenario: Scenario) -> list[str]:
    """Ask the assistant's model for customer-style messages for `scenario`'s node: about
    ROUTING_EXAMPLE_DRAFTS_PER_LANGUAGE in each drafting language, without repeats and without texts that are
    examples of another node of the assistant. [] when the model is unavailable, fails or answers nothing usable
    (logged as a warning; never raises). Stores nothing."""
    other_titles, taken = _other_nodes(scenario)
    request = draft_request(
        title=scenario.title,
        description=scenario.description,
        instruction=scenario.instruction,
        other_titles=other_titles,
        languages=draft_languages(scenario),
        per_language=max(1, int(captain_setting("ROUTING_EXAMPLE_DRAFTS_PER_LANGUAGE"))),
    )
    wanted = request.wanted
    try:
        model = DraftingModel(
            scenario.assistant,
            temperature=TEMPERATURE,
            max_tokens=request.max_tokens,
            response_format=EXAMPLES_SCHEMA,
        )
        content = model.ask(request.system, request.user)
    except (EndpointUnavailable, ModelError) as exc:
        logger.warning(
            "routing example drafts: scenario %s: model failed, nothing drafted: %s", scenario.pk, exc
        )
        return []
    parsed = parse_examples(content)
    if not parsed:
        logger.warning(
            "routing example drafts: scenario %s: no usable example in the model's answer %r",
            scenario.pk,
            (content or "")[:200],
        )
        return []
    kept = [text for text in parsed if example_key(text) not in taken][:wanted]
    if len(kept) < len(parsed):
        logger.info(
            "routing example drafts: scenario %s: %s of %s examples kept (others repeat another node's or "
            "exceed %s)",
            scenario.pk,
            len(kept),
            len(parsed),
            wanted,
        )
    return kept


def drafts_current(scenario: Scenario) -> bool:
    """True when drafted rows of the scenario's node were written from its current texts (any status: a draft
    the builder rejected was still written from these texts)."""
    return RoutingExample.objects.filter(
        assistant_id=scenario.assistant_id,
        key=scenario.key,
        source=Source.DRAFTED,
        drafted_from=scenario_texts_hash(scenario),
    ).exists()


def store_drafts(scenario: Scenario, *, force: bool = False) -> int:
    """Draft examples for `scenario` and store them as suggestions of its node, replacing the node's earlier
    *suggested* drafts. Skipped (0) when drafting is off, the scenario is disabled or its drafts are current,
    unless `force`. Returns how many were stored (0 too when the model failed: earlier drafts then stay)."""
    if not captain_setting("ROUTING_EXAMPLE_DRAFTS"):
        return 0
    if not force and (not scenario.enabled or drafts_current(scenario)):
        return 0
    digest = scenario_texts_hash(scenario)
    texts = draft_examples(scenario)
    if not texts:
        return 0
    with transaction.atomic():
        # The row lock serialises two drafting jobs of one scenario (an edit's and the sweep's).
        current = Scenario.objects.select_for_update().filter(pk=scenario.pk).first()
        if current is None or current.key != scenario.key or scenario_texts_hash(current) != digest:
            # Deleted or edited while the model was writing: these drafts describe texts that are gone, and
            # the edit queued its own drafting.
            logger.info("routing example drafts: scenario %s changed while drafting; discarded", scenario.pk)
            return 0
        node = RoutingExample.objects.filter(assistant_id=scenario.assistant_id, key=scenario.key)
        node.filter(source=Source.DRAFTED, status=Status.SUGGESTED).delete()
        existing = {example_key(text) for text in node.values_list("text", flat=True)}
        builder = RoutingNode.objects.filter(assistant_id=scenario.assistant_id, key=scenario.key).first()
        existing.update(example_key(str(text)) for text in (builder.examples if builder else []) or [])
        rows = [
            RoutingExample(
                account_id=scenario.assistant.account_id,
                assistant_id=scenario.assistant_id,
                key=scenario.key,
                text=text,
                source=Source.DRAFTED,
                status=Status.SUGGESTED,
                drafted_from=digest,
            )
            for text in texts
            if example_key(text) not in existing
        ]
        # A correction of the same text may be written at the same moment: the unique constraint keeps one.
        RoutingExample.objects.bulk_create(rows, ignore_conflicts=True)
    logger.info("routing example drafts: scenario %s: %s stored", scenario.pk, len(rows))
    if rows:
        drafts_check_enqueue(assistant_id=scenario.assistant_id)
    return len(rows)


def example_drafts_run(*, scenario_id: int, force: bool = False) -> int:
    """The task's body: draft and store for one scenario id (gone: 0)."""
    scenario = Scenario.objects.select_related("assistant").filter(pk=scenario_id).first()
    if scenario is None:
        return 0
    return store_drafts(scenario, force=force)


def example_drafts_enqueue(*, scenario_id: int, force: bool = False) -> bool:
    """Queue drafting for one scenario once the current transaction commits; False (nothing queued) when drafting
    is off. A failed publish (broker down) is logged, never raised into the save that asked: the sweep drafts
    for scenarios without current drafts later."""
    if not captain_setting("ROUTING_EXAMPLE_DRAFTS"):
        return False
    draft = task("captain.tasks.draft_routing_examples")
    transaction.on_commit(lambda: draft.delay(scenario_id, force), robust=True)
    return True


def scenario_texts_changed(scenario: Scenario, fields: dict[str, Any]) -> bool:
    """Whether writing `fields` on `scenario` calls for new drafts: a drafted-from text changes, or a disabled
    scenario is enabled (the sweep skipped it while it was off). Read before the fields are written."""
    if any(name in fields and fields[name] != getattr(scenario, name) for name in DRAFTED_FROM_FIELDS):
        return True
    return bool(fields.get("enabled")) and not scenario.enabled


# ---- backfill -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Missing:
    """A scenario whose node has no drafts of its current texts."""

    scenario_id: int
    digest: str


def drafts_missing(*, assistant_id: int | None = None) -> list[Missing]:
    """Enabled scenarios (of one assistant, or of all) with no drafts of their current texts and no builder
    examples on their node (drafts would not be used there), oldest first."""
    scenarios = Scenario.objects.filter(enabled=True)
    nodes = RoutingNode.objects.all()
    drafted = RoutingExample.objects.filter(source=Source.DRAFTED).exclude(drafted_from="")
    if assistant_id is not None:
        scenarios = scenarios.filter(assistant_id=assistant_id)
        nodes = nodes.filter(assistant_id=assistant_id)
        drafted = drafted.filter(assistant_id=assistant_id)
    with_examples = {
        (assistant, key)
        for assistant, key, examples in nodes.values_list("assistant_id", "key", "examples")
        if any(str(text).strip() for text in examples or [])
    }
    current = set(drafted.values_list("assistant_id", "key", "drafted_from").distinct())
    missing = []
    rows = scenarios.order_by("id").values_list("id", "assistant_id", "key", *DRAFTED_FROM_FIELDS)
    for scenario_id, assistant, key, *texts in rows.iterator():
        digest = _texts_hash(*texts)
        if (assistant, key) not in with_examples and (assistant, key, digest) not in current:
            missing.append(Missing(scenario_id, digest))
    return missing


@cache
def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=5)


def _text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def _mark_key(scenario_id: int) -> str:
    return f"captain:routing-example-drafts:scenario:{scenario_id}"


def example_drafts_sweep() -> int:
    """The periodic job: queue drafting for up to ROUTING_EXAMPLE_DRAFTS_BATCH scenarios without current drafts,
    each at most once per SWEEP_RETRY_HOURS for the same texts (a Redis marker holding the texts' hash). Returns
    how many were queued."""
    if not captain_setting("ROUTING_EXAMPLE_DRAFTS"):
        return 0
    draft = task("captain.tasks.draft_routing_examples")
    batch = max(0, int(captain_setting("ROUTING_EXAMPLE_DRAFTS_BATCH")))
    missing = drafts_missing()
    if not missing or not batch:
        return 0
    client = _redis()
    marks = client.mget([_mark_key(m.scenario_id) for m in missing])
    due = [m for m, mark in zip(missing, marks, strict=True) if _text(mark) != m.digest]
    queued = 0
    for item in due[:batch]:
        try:
            draft.delay(item.scenario_id)
        except Exception:  # the broker is down: the next sweep tries again
            logger.exception("routing example drafts: could not queue scenario %s", item.scenario_id)
            break
        client.set(_mark_key(item.scenario_id), item.digest, ex=SWEEP_RETRY_HOURS * 3600)
        queued += 1
    if queued:
        logger.info("routing example drafts: sweep queued %s of %s scenarios", queued, len(due))
    return queued


# ---- review -------------------------------------------------------------------------------------------------


def routing_example_text_errors(*, example: RoutingExample, text: str) -> list[str]:
    """Why `text` cannot be `example`'s text ([] when it can)."""
    text = " ".join(text.split())
    if not text:
        return ["Write the example message."]
    limit = RoutingExample._meta.get_field("text").max_length
    if limit is not None and len(text) > limit:
        return [f"At most {limit} characters."]
    duplicate = (
        RoutingExample.objects.filter(assistant_id=example.assistant_id, key=example.key, text=text)
        .exclude(pk=example.pk)
        .exists()
    )
    return ["This node already has this example."] if duplicate else []


def routing_example_edit(*, example: RoutingExample, text: str) -> RoutingExample:
    """Change an example's text. Editing a drafted *suggestion* accepts it: the text is now the builder's
    wording, and a later redraft replaces only suggestions nobody touched. Other rows keep their status (a
    correction still waits for its review)."""
    errors = routing_example_text_errors(example=example, text=text)
    if errors:
        raise ValidationError({"text": errors})
    with transaction.atomic():
        if example.source == Source.DRAFTED and example.status == Status.SUGGESTED:
            review_examples(assistant=example.assistant, ids=[example.pk], accept=True)
            example.refresh_from_db(fields=["status", "reviewed_at"])
        example.text = " ".join(text.split())
        example.save(update_fields=["text"])
    return example


@dataclass
class Adopted:
    """What adopting drafts did."""

    adopted: int = 0
    refused: list[str] = field(default_factory=list)
    """Per node that could not take examples (scenario deleted or disabled), why."""


def drafted_examples_adopt(*, assistant: Assistant, ids: Iterable[int]) -> Adopted:
    """Append the assistant's drafted examples `ids` to their nodes' builder examples (`RoutingNode.examples`)
    and mark them accepted. Other assistants' ids and corrections are ignored. Once a node has builder
    examples, its remaining suggestions are no longer used by the router (the builder's examples win)."""
    result = Adopted()
    with transaction.atomic():
        rows = list(
            RoutingExample.objects.select_for_update()
            .filter(assistant=assistant, id__in=list(ids), source=Source.DRAFTED)
            .order_by("key", "id")
        )
        by_key: dict[str, list[RoutingExample]] = {}
        for row in rows:
            by_key.setdefault(row.key, []).append(row)
        for key, drafts in by_key.items():
            node = RoutingNode.objects.filter(assistant=assistant, key=key).first()
            examples = [str(text) for text in (node.examples if node else []) or []]
            known = {example_key(text) for text in examples}
            for draft in drafts:
                if example_key(draft.text) not in known:
                    known.add(example_key(draft.text))
                    examples.append(draft.text)
            try:
                routing_node_examples_set(assistant=assistant, key=key, examples=examples)
            except ValidationError as exc:
                result.refused += [f"{key}: {message}" for message in exc.messages]
                continue
            result.adopted += review_examples(assistant=assistant, ids=[d.pk for d in drafts], accept=True)
    return result
