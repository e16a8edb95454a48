"""Test questions drafted from the assistant's documents: the assistant's own model reads a few passages of each
ready document and writes questions a customer might ask. They are stored unapproved: an admin approves (or
deletes) each one before a run asks it. Drafting costs no credits (captain.assistants.services.drafting)."""

from __future__ import annotations

import logging

from django.core.exceptions import ValidationError
from django.db import transaction

from captain.assistants.services.drafting import DraftingModel, json_values
from captain.assistants.services.model_endpoints import EndpointUnavailable
from captain.evaluation.models import EvalQuestion, EvalSet
from captain.evaluation.services.imports import MAX_QUESTION_CHARS, ParsedQuestion
from captain.evaluation.services.sets import eval_questions_add
from captain.knowledge.models import KnowledgeChunk, KnowledgeDocument
from captain.queue import task
from captain.runtime.model import ModelError

logger = logging.getLogger(__name__)

QUESTIONS_PER_DOCUMENT = 3
MAX_DOCUMENTS = 10
"""One model call per document, and at most this many calls per request: drafting is a helper, not a job."""
PASSAGES_PER_DOCUMENT = 3
PASSAGE_CHARS = 2000
PROMPT = (
    "You write test questions for a customer-support assistant. Read the passages of one help document and "
    "write {n} different questions a customer might ask that these passages answer, in the language of the "
    "passages, each as the customer would type it. Answer with a JSON array of objects "
    '[{{"question": "...", "expected": "the answer according to the passages"}}] and nothing else.'
)


def _passages(document: KnowledgeDocument) -> str:
    rows = KnowledgeChunk.objects.filter(document=document, assistant_id=document.assistant_id).order_by(
        "ordinal"
    )
    texts = [
        f"{h}\n{t[:PASSAGE_CHARS]}" if h else t[:PASSAGE_CHARS]
        for h, t in rows.values_list("heading", "text")
    ]
    return "\n\n".join(texts[:PASSAGES_PER_DOCUMENT])


def _parsed(content: str | None) -> list[ParsedQuestion]:
    found: list[ParsedQuestion] = []
    for value in json_values(content):
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and isinstance(item.get("question"), str) and item["question"].strip():
                expected = item.get("expected") if isinstance(item.get("expected"), str) else ""
                found.append(
                    ParsedQuestion(item["question"].strip()[:MAX_QUESTION_CHARS], str(expected).strip())
                )
    return found[:QUESTIONS_PER_DOCUMENT]


def eval_questions_draft(*, set_id: int) -> int:
    """Draft questions for the set from its assistant's ready documents; returns how many were stored (0 when
    the model is unavailable or there is nothing to read)."""
    eval_set = EvalSet.objects.select_related("assistant").filter(pk=set_id).first()
    if eval_set is None:
        return 0
    documents = KnowledgeDocument.objects.filter(
        assistant=eval_set.assistant, account_id=eval_set.account_id, status=KnowledgeDocument.Status.READY
    ).order_by("id")[:MAX_DOCUMENTS]
    questions: list[ParsedQuestion] = []
    try:
        drafter = DraftingModel(eval_set.assistant, temperature=0.4, max_tokens=800)
        for document in documents:
            passages = _passages(document)
            if passages:
                system = PROMPT.format(n=QUESTIONS_PER_DOCUMENT)
                questions += _parsed(drafter.ask(system, f"Document: {document}\n\n{passages}"))
    except (EndpointUnavailable, ModelError) as exc:
        # What was drafted before the failure is still worth reviewing.
        logger.warning("evaluation drafts: set %s: %s", set_id, exc)
    if not questions:
        return 0
    try:
        stored = eval_questions_add(
            eval_set=eval_set, questions=questions, origin=EvalQuestion.Origin.DRAFTED, approved=False
        )
    except ValidationError as exc:  # the set is full: nothing to add
        logger.info("evaluation drafts: set %s: %s", set_id, exc)
        return 0
    return len(stored)


def eval_questions_draft_enqueue(*, eval_set: EvalSet) -> None:
    draft = task("captain.tasks.eval_questions_draft")
    transaction.on_commit(lambda: draft.delay(eval_set.pk))
