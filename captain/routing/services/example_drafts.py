"""Drafted routing examples: the assistant's own model writes customer-style messages for a scenario's routing node
from the scenario's title, description and instruction, so the semantic router has phrases to compare customers'
messages with even when the builder wrote none (docs/routing.md).

- Stored as `RoutingExample(source=drafted, status=suggested, drafted_from=<sha256 of the three texts>)`. The
  router uses them only while the node has no builder-written examples (`routing_examples.examples_in_use`); the
  builder sees them as editable suggestions (admin, API) and accepts, rejects or adopts them.
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
"""

from __future__ import annotations

import hashlib
import logging
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import redis
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import get_language_info

from captain.assistants.models import Assistant, Scenario
from captain.assistants.services.drafting import DraftingModel, json_values
from captain.assistants.services.model_endpoints import EndpointUnavailable
from captain.conf import captain_setting
from captain.queue import task
from captain.routing.models import RoutingExample, RoutingNode
from captain.routing.services.routing import routing_node_examples_set
from captain.routing.services.routing_examples import review_examples
from captain.runtime.knowledge.tokens import has_cjk
from captain.runtime.model import ModelError

logger = logging.getLogger(__name__)

Source = RoutingExample.Source
Status = RoutingExample.Status

DRAFTED_FROM_FIELDS = ("title", "description", "instruction")
"""The scenario texts drafts are written from: a change to one of them calls for new drafts."""
MAX_EXAMPLE_CHARS = 200
"""Longer "messages" are the model explaining, not a customer asking (the model field holds 500)."""
SCENARIO_TEXT_CHARS = 1500
"""Of a description or instruction put in the prompt, so a long instruction cannot crowd out the request."""
OTHER_NODES_IN_PROMPT = 30
TOKENS_PER_EXAMPLE = 48
"""Generation budget per example asked (a short Chinese sentence takes ~25 tokens, plus JSON quoting)."""
TEMPERATURE = 0.7
"""Higher than FAQ drafting's 0.2: the point is varied phrasings, and nothing here is a fact to copy."""
MIN_LINES_AS_LIST = 3
"""An answer that is not JSON is read one example per line only when it has at least this many lines: a one-line
refusal or comment is not a list of examples."""
SWEEP_RETRY_HOURS = 6
"""The sweep queues a scenario at most once per this period for the same texts, so a scenario whose drafting
keeps failing (or keeps finding only duplicates) costs one model call per period, not one per sweep."""

EXAMPLES_SCHEMA: dict[str, Any] = {
    # An object around the array: OpenAI's structured outputs want an object at the root; llama.cpp's grammar
    # takes either. A model that ignores the format still gets read (a bare array, or one example per line).
    "type": "json_schema",
    "json_schema": {
        "name": "routing_examples",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"examples": {"type": "array", "items": {"type": "string"}}},
            "required": ["examples"],
            "additionalProperties": False,
        },
    },
}

SYSTEM_PROMPT = (
    "You help set up a customer support assistant that passes each customer message to the right specialist. "
    "Write {n} messages a customer could send that THIS specialist should handle, in each of these languages: "
    "{languages}. Keep each message short (one sentence, at most 20 words) and make them varied: direct "
    "requests, indirect ones that describe the situation without naming the topic, casual and polite ones, one "
    "with a typo, and one written as a follow-up inside an ongoing conversation. Write as the customer, never "
    "as the support team; no names, order numbers or other personal details. Do not write messages that belong "
    "to one of the other specialists. "
    'Reply with only JSON: {{"examples": ["...", "..."]}}.'
)

_LIST_MARK_RE = re.compile(r"^(?:[-*•·]|\d{1,2}\s*[.)、:：]|\(\d{1,2}\))\s*")
_QUOTES = "\"'“”‘’「」『』`"


def scenario_texts_hash(scenario: Scenario) -> str:
    """sha256 of the texts drafts are written from; stored as `drafted_from` on each draft."""
    return _texts_hash(*(getattr(scenario, name) for name in DRAFTED_FROM_FIELDS))


def _texts_hash(*texts: str) -> str:
    # A separator no builder types, so ("ab", "c") and ("a", "bc") differ.
    return hashlib.sha256("\x1f".join(texts).encode()).hexdigest()


def example_key(text: str) -> str:
    """What makes two examples the same message: case, blanks and punctuation aside."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if not ch.isspace() and not unicodedata.category(ch).startswith("P"))


# ---- languages ----------------------------------------------------------------------------------------------


def draft_languages(scenario: Scenario) -> list[str]:
    """ROUTING_EXAMPLE_LANGUAGES, plus the scenario's own language when it is not among them (Chinese when its
    title or description has CJK characters, English otherwise)."""
    return languages_for(scenario.title, scenario.description)


def languages_for(title: str, description: str) -> list[str]:
    configured = [str(code).strip() for code in captain_setting("ROUTING_EXAMPLE_LANGUAGES") or []]
    languages = list(dict.fromkeys(code for code in configured if code))
    own = "zh" if has_cjk(f"{title} {description}") else "en"
    if not any(code.lower().split("-")[0] == own for code in languages):
        languages.append(own)
    return languages


def language_name(code: str) -> str:
    """An English name the model understands for a language code ("zh" is Django's "zh-hans")."""
    if code.lower() in ("zh", "zh-cn"):
        return "Simplified Chinese"
    try:
        return str(get_language_info(code)["name"])
    except KeyError:
        return code


# ---- the model's answer -------------------------------------------------------------------------------------


def _clean(text: str) -> str | None:
    text = " ".join(text.split()).strip(_QUOTES).strip()
    if not text or len(text) > MAX_EXAMPLE_CHARS or not example_key(text):
        return None
    return text


def _strings(value: Any) -> list[str]:
    """Strings of a JSON value: an array of them, {"examples": [...]}, or per-language arrays
    ({"en": [...], "zh": [...]}); anything else holds none."""
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    if isinstance(value, dict):
        return [item for inner in value.values() if isinstance(inner, list) for item in _strings(inner)]
    return []


def _lines(content: str) -> list[str]:
    lines = []
    for raw in content.splitlines():
        line = raw.strip()
        if not line or line.startswith("```") or line.endswith((":", "：")):
            continue  # blank, a fence, or a heading ("Here are some examples:", "English:")
        lines.append(_LIST_MARK_RE.sub("", line, count=1))
    return lines if len(lines) >= MIN_LINES_AS_LIST else []


def parse_examples(content: str | None) -> list[str]:
    """The example messages in a model's answer, cleaned and without repeats; [] when there are none. JSON
    first; an answer that holds no JSON at all is read one example per line. Never raises."""
    if not content or not content.strip():
        return []
    values = json_values(content)
    if values:
        candidates = [text for value in values for text in _strings(value)]
    elif content.lstrip().startswith(("[", "{")):
        candidates = []  # JSON broken off or malformed: not a list of lines either
    else:
        candidates = _lines(content)
    texts: list[str] = []
    seen: set[str] = set()
    for candidate in candidates:
        text = _clean(candidate)
        if text is not None and example_key(text) not in seen:
            seen.add(example_key(text))
            texts.append(text)
    return texts


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


@dataclass(frozen=True)
class DraftRequest:
    """What the model is asked for one node: the same for the product and the routing benchmark's drafted
    variant, which drafts from a dataset's scenarios without a database."""

    system: str
    user: str
    wanted: int
    """Examples kept at most."""

    @property
    def max_tokens(self) -> int:
        return 40 + TOKENS_PER_EXAMPLE * self.wanted


def draft_request(
    *,
    title: str,
    description: str,
    instruction: str,
    other_titles: list[str],
    languages: list[str],
    per_language: int,
) -> DraftRequest:
    lines = [
        f"Specialist: {title}",
        f"When it applies: {description[:SCENARIO_TEXT_CHARS]}",
        f"What it does: {instruction[:SCENARIO_TEXT_CHARS]}",
    ]
    if other_titles:
        lines.append("Other specialists (not this one): " + "; ".join(other_titles))
    system = SYSTEM_PROMPT.format(n=per_language, languages=", ".join(language_name(c) for c in languages))
    return DraftRequest(system, "\n".join(lines), per_language * len(languages))


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
