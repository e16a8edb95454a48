"""What one AI reply costs the database: the SQL queries of `run_for_message` end to end (one customer message,
answered by the scripted OpenAI-compatible server over HTTP, the conversation lock in a real Redis).

The bound is today's count: a change that adds a query per reply makes this fail, and the message lists the
queries by table so the new one is easy to find. Every reply run of every worker pays these."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from captain.answering.models import ReplyJob
from captain.answering.services.runs import run_for_message
from tests.factories import AssistantInboxFactory, ConversationFactory, MessageFactory, ScenarioFactory
from tests.support.fake_llm_server import text

pytestmark = [pytest.mark.django_db]

# Queries of one reply run on SQLite (savepoints included: the test runs inside a transaction; spans are stored,
# 4 INSERTs), measured with a worker that already answered once for this assistant: 64 on 2026-11-29 before the
# per-process configuration cache and the fewer credit and knowledge reads, 43 after. Lower it when you cut one.
MAX_REPLY_RUN_QUERIES = 43


def by_table(queries: CaptureQueriesContext) -> str:
    """The captured statements counted by (verb, table), most frequent first."""
    counts: Counter[str] = Counter()
    for query in queries.captured_queries:
        sql = query["sql"]
        table = re.search(r'(?:FROM|INTO|UPDATE)\s+"(\w+)"', sql)
        counts[f"{sql.split()[0]} {table.group(1) if table else ''}"] += 1
    return "\n".join(f"{n:3d} {key}" for key, n in counts.most_common())


@pytest.fixture
def team(redis_url, llm_settings):
    link = AssistantInboxFactory()
    ScenarioFactory(
        assistant=link.assistant,
        title="Refunds",
        key="refunds",
        description="Refund requests",
        tools=["faq_lookup"],
    )
    return link


def customer_message(link, content: str = "I want my money back"):
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    return MessageFactory(conversation=conversation, content=content, reply_job=ReplyJob.Status.PENDING)


def test_one_reply_run_stays_within_its_query_bound(team, llm_settings):
    # A first run for the assistant (imports, per-process state): the bound is for the runs that follow.
    llm_settings.push(text("Happy to help!"))
    assert run_for_message(message_id=customer_message(team).id) == "reply"

    message = customer_message(team)
    llm_settings.push(text("Happy to help!"))
    with CaptureQueriesContext(connection) as queries:
        assert run_for_message(message_id=message.id) == "reply"
    count = len(queries.captured_queries)
    assert count <= MAX_REPLY_RUN_QUERIES, f"{count} queries:\n{by_table(queries)}"
    # Not a bound that cannot fail: the run did reach the database for its reply.
    assert message.conversation.messages.filter(ai_agent_key="assistant").count() == 1
