"""Replay a help centre's questions through the real run path, one new conversation per question, for each
knowledge strategy side by side, and score the replies.

The run path is the product's: the help centre is loaded through the knowledge services (documents processed by
the same code as the Celery task), each question arrives through `message_ingest` (what a channel webhook calls),
and the reply task runs in this process (Celery's eager mode) through `run_for_message`, the lock on a private
Redis, the knowledge step, the model over HTTP, and `outcome_apply`. Everything happens in a throw-away test
database, so the product's data is never touched.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.db import connection
from django.test.utils import override_settings, setup_test_environment, teardown_test_environment

from .attempts import take
from .dataset import HelpCentre, Question

STRATEGIES: dict[str, dict[str, Any]] = {
    # Today's way before knowledge injection: the model may call the search tool; nothing checks the reply.
    "tool": {"knowledge_mode": "tool", "grounding_check": False},
    # Sources found for each message in the prompt, the gate for nothing-found and off-topic.
    "inject": {"knowledge_mode": "inject", "grounding_check": False},
    # The same, and the deterministic grounding check before a reply is sent.
    "inject+check": {"knowledge_mode": "inject", "grounding_check": True},
}


@dataclass
class Answer:
    question: Question
    strategy: str
    outcome: str
    reply: str
    seconds: float
    llm_calls: int
    input_tokens: int
    credit_used: bool
    sources: list[dict[str, Any]] = field(default_factory=list)
    expected_refs: set[str] = field(default_factory=set)
    detail: str = ""
    """The run's handoff reason (the grounding check's findings when it refused the reply)."""
    attempts: list[dict[str, Any]] = field(default_factory=list)
    """Each model attempt's reply and the knowledge step's evidence and action (`attempts.recorded`)."""


@dataclass
class Loaded:
    assistant_id: int
    inbox_id: int
    account_id: int
    refs_by_source: dict[str, set[str]]
    """Dataset `source` value (a document file name or `faq:<index>`) -> refs of its FAQ entry / chunks."""
    corpus_texts: list[str]
    load_seconds: float


@contextlib.contextmanager
def isolated_database() -> Iterator[None]:
    """A fresh, migrated test database for the benchmark (as the test runner makes one), dropped afterwards."""
    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0, keepdb=False)
        teardown_test_environment()


@contextlib.contextmanager
def product_settings(*, base_url: str, model: str, redis_url: str, timeout: float) -> Iterator[None]:
    from django.conf import settings

    from config.celery import app

    captain = {
        **getattr(settings, "CAPTAIN", {}),
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "local",
        "DEFAULT_MODEL": model,
        "MODEL_ENDPOINTS": None,
        "LLM_TIMEOUT_SECONDS": timeout,
        "LLM_MAX_RETRIES": 0,
        "DEBOUNCE_SECONDS": 0,
        "STORE_SPANS": False,
        "FAQ_DRAFTS_MAX_CALLS_PER_DOCUMENT": 0,
    }
    eager = (app.conf.task_always_eager, app.conf.task_eager_propagates)
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True
    try:
        with override_settings(CAPTAIN=captain, REDIS_URL=redis_url, CELERY_BROKER_URL=redis_url):
            yield
    finally:
        app.conf.task_always_eager, app.conf.task_eager_propagates = eager


def load_help_centre(centre: HelpCentre) -> Loaded:
    """Account, API inbox, assistant, FAQ entries and processed documents, through the product's services."""
    from captain.answering.models import CreditBalance
    from captain.assistants.models import Assistant, AssistantInbox
    from captain.knowledge.models import KnowledgeChunk, KnowledgeDocument
    from captain.knowledge.services.faq import faq_entry_create
    from captain.knowledge.services.knowledge import document_create_upload
    from captain.knowledge.services.knowledge_processing import document_process
    from helpdesk.models import Account, Inbox

    started = time.monotonic()
    account = Account.objects.create(name=f"bench {centre.name}")
    CreditBalance.objects.create(account=account, limit=1_000_000)
    inbox = Inbox.objects.create(
        account=account, name="bench", channel_type=Inbox.ChannelType.API, secret="bench"
    )
    assistant = Assistant.objects.create(
        account=account,
        name=f"{centre.company} assistant",
        product_name=centre.company,
        description=centre.description,
    )
    AssistantInbox.objects.create(assistant=assistant, inbox=inbox)
    refs: dict[str, set[str]] = {}
    corpus: list[str] = []
    for index, pair in enumerate(centre.faq):
        entry = faq_entry_create(assistant=assistant, question=pair["question"], answer=pair["answer"])
        # The datasets name an FAQ pair by its 0-based index in faq.json ("faq:3").
        for key in (f"faq:{index}",):
            refs.setdefault(key, set()).add(f"faq:{entry.id}")
        corpus += [pair["question"], pair["answer"]]
    for path in centre.documents:
        doc = document_create_upload(
            assistant=assistant, file_name=path.name, content_type="", data=path.read_bytes()
        )
        document_process(document_id=doc.id)
        doc = KnowledgeDocument.objects.get(pk=doc.id)
        if doc.status != KnowledgeDocument.Status.READY:
            raise RuntimeError(f"{path.name}: {doc.status} {doc.status_reason}")
        chunk_refs = {
            f"chunk:{c}" for c in KnowledgeChunk.objects.filter(document=doc).values_list("id", flat=True)
        }
        for key in (path.name, path.stem):
            refs.setdefault(key, set()).update(chunk_refs)
        corpus += list(KnowledgeChunk.objects.filter(document=doc).values_list("text", flat=True))
    return Loaded(assistant.id, inbox.id, account.id, refs, corpus, time.monotonic() - started)


def set_strategy(loaded: Loaded, strategy: str) -> dict[str, Any]:
    from captain.assistants.models import Assistant

    config = STRATEGIES[strategy]
    Assistant.objects.filter(pk=loaded.assistant_id).update(knowledge_mode=config["knowledge_mode"])
    return config


def expected_refs(loaded: Loaded, question: Question) -> set[str]:
    out: set[str] = set()
    for part in [p.strip() for p in question.source.replace(";", ",").split(",") if p.strip()]:
        out |= loaded.refs_by_source.get(part, set())
    return out


def ask(loaded: Loaded, question: Question, *, strategy: str, serial: int) -> Answer:
    """One question as a new conversation: earlier turns stored first, then the question through ingest."""
    from captain.answering.models import Run
    from helpdesk.channels.base import InboundContact, InboundMessage
    from helpdesk.models import Contact, ContactInbox, Conversation, Inbox, Message
    from helpdesk.services.messages import message_ingest

    inbox = Inbox.objects.get(pk=loaded.inbox_id)
    source_id = f"{strategy}-{question.id}-{serial}"
    contact = InboundContact(source_id=source_id, name="Bench customer")
    if question.previous:
        person = Contact.objects.create(account_id=loaded.account_id, name=contact.name)
        link = ContactInbox.objects.create(contact=person, inbox=inbox, source_id=source_id)
        conversation = Conversation.objects.create(
            account_id=loaded.account_id,
            inbox=inbox,
            contact_inbox=link,
            contact=person,
            status=Conversation.Status.PENDING,
        )
        for turn in question.previous:
            incoming = turn.get("role") == "user"
            Message.objects.create(
                account_id=loaded.account_id,
                inbox=inbox,
                conversation=conversation,
                message_type=Message.Type.INCOMING if incoming else Message.Type.OUTGOING,
                sender_type=Message.SenderType.CONTACT if incoming else Message.SenderType.ASSISTANT,
                sender_contact=person if incoming else None,
                content=turn.get("content", ""),
            )
    take()  # anything recorded before this question (loading the help centre) is not its
    started = time.monotonic()
    result = message_ingest(
        inbox=inbox,
        inbound=InboundMessage(provider_message_id=source_id, contact=contact, text=question.question),
    )
    seconds = time.monotonic() - started
    run = Run.objects.filter(conversation_id=result.message.conversation_id).order_by("-id").first()
    reply = ""
    if run is not None and run.reply_message_id:
        reply = (
            Message.objects.filter(pk=run.reply_message_id).values_list("content", flat=True).first() or ""
        )
    return Answer(
        question=question,
        strategy=strategy,
        outcome=run.outcome if run else "none",
        reply=reply,
        seconds=seconds,
        llm_calls=run.llm_calls if run else 0,
        input_tokens=run.input_tokens if run else 0,
        credit_used=bool(run and run.credit_used),
        sources=list(run.sources) if run else [],
        expected_refs=expected_refs(loaded, question),
        detail=run.detail if run else "",
        attempts=take(),
    )


def retrieval_only(loaded: Loaded, questions: list[Question]) -> list[dict[str, Any]]:
    """What the knowledge step finds and what the gate says for each question, with no model call."""
    from captain.answering.services.team import _scope_texts
    from captain.assistants.models import Assistant
    from captain.knowledge.services.knowledge_search import AssistantKnowledge, _loaded
    from captain.knowledge.services.rerank import is_cjk
    from captain.knowledge.services.retrieval import get_encoder
    from captain.runtime.knowledge import TopicGate
    from captain.runtime.knowledge.evidence import select_evidence

    from .scoring import facts_present

    assistant = Assistant.objects.get(pk=loaded.assistant_id)
    base = AssistantKnowledge(assistant_id=assistant.id, account_id=assistant.account_id)
    gate = TopicGate(encode=get_encoder().encode, scope_texts=_scope_texts(assistant))
    rows = []
    for question in questions:
        context = next((m["content"] for m in reversed(question.previous) if m.get("role") == "user"), "")
        found = base.retrieve(question.question, context=context)
        verdict, score = gate.classify(question.question, best_knowledge_score=found.best_score)
        expected = expected_refs(loaded, question)
        # Where the expected source ranks on the vector side alone (a diagnosis of misses, for tuning).
        index = _loaded(assistant.id, assistant.account_id)
        scores = index.index.scores(get_encoder().encode(question.question))
        ranked = np.argsort(-scores)
        order = [index.sources[i].ref for i in ranked]
        expected_rank = next((n for n, ref in enumerate(order) if ref in expected), None)
        # The language of the passage that holds the answer, from its text (CJK or not): a question in the other
        # language is a cross-language search.
        texts = {s.ref: f"{s.title}\n{s.text}" for s in index.sources if s.ref in expected}
        source_lang = ("zh" if is_cjk(texts[min(texts)]) else "en") if texts else ""
        # Where the first sentence holding every expected fact ranks in the evidence the prompt starts with.
        evidence = select_evidence(
            found.sources, query=question.question, context=context, encode=get_encoder().encode, limit=6
        )
        evidence_rank = next(
            (n for n, e in enumerate(evidence, 1) if question.facts and facts_present(e.unit.full, question)),
            None,
        )
        rows.append(
            {
                "id": question.id,
                "kind": question.kind,
                "lang": question.lang,
                "expected": sorted(expected_refs(loaded, question)),
                "source_lang": source_lang,
                "found": [s.ref for s in found.sources],
                "scores": [round(s.score, 3) for s in found.sources],
                "best": round(found.best_score, 3),
                "verdict": verdict.value,
                "gate_score": round(score, 3),
                "ms": round(found.latency_ms, 1),
                "expected_vector_rank": expected_rank,
                "evidence_rank": evidence_rank,
                "expected_vector_score": round(float(scores[ranked[expected_rank]]), 3)
                if expected_rank is not None
                else None,
            }
        )
    return rows
