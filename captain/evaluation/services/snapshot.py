"""The configuration a run ran with: what makes two runs of one set comparable, or different."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.db import models

from captain.answering.services.team import team_model_for
from captain.assistants.models import Assistant, Scenario
from captain.assistants.services.model_endpoints import EndpointUnavailable
from captain.knowledge.models import FaqEntry, KnowledgeDocument

# Bookkeeping columns: they change without changing a single prompt.
_NOT_PROMPT = frozenset({"id", "account", "created_at", "updated_at"})


@dataclass(frozen=True)
class ConfigSnapshot:
    model_name: str
    knowledge_mode: str
    config_hash: str
    document_count: int
    faq_count: int


def _fields(row: models.Model) -> dict[str, Any]:
    return {
        f.attname: getattr(row, f.attname) for f in row._meta.concrete_fields if f.name not in _NOT_PROMPT
    }


def config_hash(assistant: Assistant) -> str:
    """A short hash of every field of the assistant and of its scenarios: the instructions, rules, messages,
    model and knowledge settings the prompts are built from (a scenario's edit changes it too)."""
    scenarios = [_fields(s) for s in Scenario.objects.filter(assistant=assistant).order_by("id")]
    payload = json.dumps(
        {"assistant": _fields(assistant), "scenarios": scenarios}, sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def config_snapshot(assistant: Assistant) -> ConfigSnapshot:
    try:
        team_model = team_model_for(assistant)
        model_name = f"{team_model.endpoint.name} / {team_model.model}"
    except EndpointUnavailable as exc:
        model_name = f"unavailable ({exc})"[:200]
    documents = KnowledgeDocument.objects.filter(
        assistant=assistant, account_id=assistant.account_id, status=KnowledgeDocument.Status.READY
    )
    faqs = FaqEntry.objects.filter(
        assistant=assistant, account_id=assistant.account_id, status=FaqEntry.Status.APPROVED, enabled=True
    )
    return ConfigSnapshot(
        model_name=model_name,
        knowledge_mode=str(assistant.knowledge_mode),
        config_hash=config_hash(assistant),
        document_count=documents.count(),
        faq_count=faqs.count(),
    )
