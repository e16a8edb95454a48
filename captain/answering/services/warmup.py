"""Warm the model server's prompt cache with the assistants' fixed prompts, so a first reply reads only what is new.

Every call of an agent starts with the same fixed part: its system prompt and tool schemas (captain.runtime's
`fixed_prefix`; the turn's context and the conversation follow it). A server with a prompt cache (the bundled
llama.cpp server; hosted APIs cache long prefixes too) reads that part once and then only what follows: on the
bundled model on two cores, reading ~800 prompt tokens is most of a reply's time. After a worker starts, the
background lane sends the prefix of every agent (the triage assistant and each specialist: the router may send
a message straight to a specialist) of the most recently active assistants once, asking for one token.
"""

from __future__ import annotations

import logging

from django.db.models import Max

from captain.answering.services.team import team_for, team_model_for
from captain.assistants.models import TRIAGE_KEY, Assistant
from captain.assistants.services.model_endpoints import EndpointUnavailable, model_client_for
from captain.conf import captain_setting
from captain.runtime import ModelError, ModelSettings
from captain.runtime.model_calls import fixed_prefix

logger = logging.getLogger(__name__)


def assistants_to_warm(limit: int) -> list[Assistant]:
    """Assistants that serve an inbox, the most recently active first (their latest run), at most `limit`."""
    return list(
        Assistant.objects.filter(assistant_inboxes__isnull=False)
        .annotate(last_run=Max("runs__id"))
        .order_by("-last_run", "-id")
        .distinct()[:limit]
    )


def prompt_prefixes_warm(*, limit: int | None = None) -> int:
    """Send the prefix of every agent of up to `limit` assistants (default `PROMPT_WARM_ASSISTANTS`) to their
    model, the triage agent first; returns how many prefixes were sent. Never raises for a model or endpoint
    problem: warming is only an optimisation."""
    count = int(captain_setting("PROMPT_WARM_ASSISTANTS")) if limit is None else limit
    warmed = 0
    for assistant in assistants_to_warm(count):
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
    return warmed
