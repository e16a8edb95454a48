"""Reads of assistants and scenarios; `access_*` fetch and authorize in one call."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Prefetch, QuerySet
from django.http import Http404

from captain.assistants.models import Assistant, AssistantInbox, ModelEndpoint, Scenario
from captain.knowledge.models import FaqEntry, KnowledgeChunk


def assistant_list(*, account_id: int) -> QuerySet[Assistant]:
    return (
        Assistant.objects.filter(account_id=account_id)
        .prefetch_related(Prefetch("assistant_inboxes", queryset=AssistantInbox.objects.order_by("inbox_id")))
        .order_by("id")
    )


def access_assistant(*, account_id: int, assistant_id: int) -> Assistant:
    """The assistant if it belongs to the account; 404 otherwise."""
    assistant = assistant_list(account_id=account_id).filter(pk=assistant_id).first()
    if assistant is None:
        raise Http404("No such assistant.")
    return assistant


def assistant_serving(*, inbox_id: int) -> Assistant | None:
    """The assistant that answers the inbox, for a reply run: with `knowledge_present`, whether it has an
    approved, enabled FAQ entry or a document chunk to search (`has_knowledge`), read in the same query.
    (Two EXISTS columns combined here cost the worker less than one combined in SQL: the ORM's compile of
    `Exists | Exists` alone took 0.2 ms; and an inbox has at most one assistant, so no ORDER BY.)"""
    faq = FaqEntry.objects.filter(assistant=OuterRef("pk"), status=FaqEntry.Status.APPROVED, enabled=True)
    chunks = KnowledgeChunk.objects.filter(assistant=OuterRef("pk"))
    rows = list(
        Assistant.objects.filter(assistant_inboxes__inbox_id=inbox_id).annotate(
            _has_faq=Exists(faq), _has_chunks=Exists(chunks)
        )[:1]
    )
    if not rows:
        return None
    assistant = rows[0]
    assistant.knowledge_present = bool(assistant._has_faq or assistant._has_chunks)  # type: ignore[attr-defined]
    return assistant


def scenario_list(*, assistant: Assistant) -> QuerySet[Scenario]:
    return Scenario.objects.filter(assistant=assistant).order_by("id")


def access_scenario(*, assistant: Assistant, scenario_id: int) -> Scenario:
    """A scenario of an assistant already obtained through `access_assistant`; 404 otherwise."""
    scenario = scenario_list(assistant=assistant).filter(pk=scenario_id).first()
    if scenario is None:
        raise Http404("No such scenario.")
    return scenario


def scenario_titles(*, account_id: int) -> dict[str, str]:
    """Scenario key -> title over the account's assistants (for a key used by several, the oldest title)."""
    return dict(
        Scenario.objects.filter(assistant__account_id=account_id).values_list("key", "title").order_by("-id")
    )


def endpoint_keys_exist(*, account_id: OuterRef) -> Exists:
    """Whether any of the account's model endpoints holds an (encrypted) API key: for another domain's
    annotation (`account_id` an `OuterRef` to its rows' account)."""
    return Exists(ModelEndpoint.objects.filter(account_id=account_id).exclude(api_key_encrypted=""))
