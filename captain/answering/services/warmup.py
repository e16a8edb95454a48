"""Warm the model server's prompt cache with the assistants' fixed prompts, so a first reply reads only what is new.

Every call of an agent starts with the same fixed part: its system prompt and tool schemas (captain.runtime's
`fixed_prefix`; the turn's context and the conversation follow it). A server with a prompt cache (the bundled
llama.cpp server; hosted APIs cache long prefixes too) reads that part once and then only what follows: on the
bundled model on two cores, reading ~800 prompt tokens is most of a reply's time. After a worker starts, the
customer lane (it is for the first customers; `scripts/run` waits for it) sends the prefix of every agent (the
triage assistant and each specialist: the router may send a message straight to a specialist) of the most
recently active assistants once, asking for one token. It loads the sentence encoder first, for the same reason.
"""

from __future__ import annotations

import json
import logging
import time

import redis
from django.conf import settings
from django.db import transaction
from django.db.models import Max

from captain.answering.services.team import team_for, team_model_for
from captain.assistants.models import TRIAGE_KEY, Assistant
from captain.assistants.services.model_endpoints import EndpointUnavailable, model_client_for
from captain.conf import captain_setting
from captain.queue import task
from captain.runtime import ModelError, ModelSettings
from captain.runtime.model_calls import fixed_prefix

logger = logging.getLogger(__name__)

WARMED_KEY = "captain:prompt_warm:finished"
"""Redis key the start-up warm-up writes when it has finished: `{"at": epoch seconds, "warmed": prefixes}`.
`scripts/run` waits for it before it says the helpdesk is ready: a first question asked while the prefixes are
still being read found the specialist it went to not yet warmed and read its whole prompt (docs/first-run.md)."""

WARM_AFTER_EDIT_SECONDS = 5
"""How long after a builder's save the changed assistant is warmed: a builder saving an assistant and then its
scenarios one by one gets one warm-up per save, and each later one costs little (the server has cached what
comes before the scenario that changed)."""


def assistants_to_warm(limit: int) -> list[Assistant]:
    """Assistants that serve an inbox, the most recently active first (their latest run), at most `limit`."""
    return list(
        Assistant.objects.filter(assistant_inboxes__isnull=False)
        .annotate(last_run=Max("runs__id"))
        .order_by("-last_run", "-id")
        .distinct()[:limit]
    )


def prompt_prefixes_warm(*, limit: int | None = None, assistant_id: int | None = None) -> int:
    """Send the prefix of every agent of up to `limit` assistants (default `PROMPT_WARM_ASSISTANTS`), or of the
    one `assistant_id` (after a builder changed it), to their model, the triage agent first; returns how many
    prefixes were sent. Never raises for a model or endpoint problem: warming is only an optimisation."""
    count = int(captain_setting("PROMPT_WARM_ASSISTANTS")) if limit is None else limit
    if assistant_id is None:
        assistants = assistants_to_warm(count)
    else:
        # Only while warming is on, and only an assistant that serves an inbox: nobody else is answered.
        serving = Assistant.objects.filter(pk=assistant_id, assistant_inboxes__isnull=False).distinct()
        assistants = list(serving) if count > 0 else []
    if assistant_id is None:
        _encoder_warm()
    warmed = 0
    for assistant in assistants:
        try:
            team_model = team_model_for(assistant)
            agents = team_for(assistant, team_model=team_model).agents
            triage_first = sorted(agents.values(), key=lambda a: a.key != TRIAGE_KEY)
            default_client = model_client_for(team_model.endpoint)
            for agent in triage_first:
                messages, tools = fixed_prefix(agent)
                (agent.model_client or default_client).complete(
                    model=agent.model,
                    messages=messages,
                    tools=tools,
                    settings=ModelSettings(temperature=0.0, max_tokens=1),
                )
                warmed += 1
        except (EndpointUnavailable, ModelError) as exc:
            logger.info("prompt warm-up skipped for assistant %s: %s", assistant.pk, exc)
            continue
        except Exception:
            # A builder text that no longer renders fails the assistant's runs loudly; here it is only logged.
            logger.warning("prompt warm-up failed for assistant %s", assistant.pk, exc_info=True)
            continue
    if assistant_id is None:
        _record_finished(warmed)
    return warmed


def _encoder_warm() -> None:
    """Load the sentence encoder's weights in this worker now: routing and knowledge read every customer message
    with it, and its first sentence costs ~0.6 s (the weights load), which was the first customer's."""
    from captain.knowledge.services.retrieval import encoder_available, get_encoder

    if not encoder_available():
        return
    try:
        get_encoder().encode(["warm-up"])
    except Exception:
        # Only an optimisation: the first reply loads it instead.
        logger.warning("could not load the sentence encoder at start-up", exc_info=True)


def _record_finished(warmed: int) -> None:
    """Tell whoever waits for the start-up warm-up (`scripts/run`) that it is over; only an optimisation too."""
    from captain.model_gate import gate_redis

    try:
        gate_redis(settings.REDIS_URL).set(
            WARMED_KEY, json.dumps({"at": time.time(), "warmed": warmed}), ex=24 * 3600
        )
    except redis.RedisError as exc:
        logger.info("could not record the end of the prompt warm-up: %s", exc)


def prompt_warm_enqueue(*, assistant_id: int) -> bool:
    """Queue the warm-up of one assistant (background lane) once the current transaction commits: its agents'
    fixed prompts changed, so the server's cache no longer holds them. False (nothing queued) when warming is off.
    A broker that refuses it is logged by `on_commit(robust=True)`, never raised into the builder's save."""
    if int(captain_setting("PROMPT_WARM_ASSISTANTS")) <= 0:
        return False
    warm = task("captain.tasks.assistant_prompt_warm")
    transaction.on_commit(
        lambda: warm.apply_async(args=[assistant_id], countdown=WARM_AFTER_EDIT_SECONDS), robust=True
    )
    return True
