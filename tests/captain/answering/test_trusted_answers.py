"""Answers a team can trust, on the real run path (`run_for_message`, the `openai` SDK over HTTP to the scripted
model server, a real Redis lock, the bundled encoder): a value from the wrong row is not sent, a tool-only
assistant's invented order number is not sent, a Chinese question over English sources is answered in Chinese,
a promised transfer becomes the transfer, and what is refused goes to people with an honest word, free."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from captain.actions.models import CustomTool
from captain.answering.models import CreditLedgerEntry, Run, SpanRecord
from captain.answering.services.runs import run_for_message
from captain.runtime import semconv as sc
from helpdesk.models import Conversation
from tests.factories import (
    AssistantInboxFactory,
    ConversationFactory,
    FaqEntryFactory,
    MessageFactory,
    ScenarioFactory,
)
from tests.support.fake_llm_server import system_prompt, text, tool_call

from .knowledge_rows import ask, document, replies

pytestmark = [pytest.mark.django_db]

HONEST_EN = "I'm not sure about that, and I don't want to tell you something wrong, so I'm getting a colleague to help you."


@pytest.fixture
def harbour(redis_url, llm_settings, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "KNOWLEDGE_FAQ_ANSWER_SCORE": None}
    link = AssistantInboxFactory(
        assistant__product_name="Tidewater Ferries",
        assistant__description="Support for Tidewater Ferries: tickets, lockers, parking and timetables.",
    )
    document(
        link.assistant,
        "Fees",
        [
            (
                "Lockers",
                "| Item | Fee |\n|---|---|\n| Small locker | €4 per day |\n| Large locker | €8 per day |",
            ),
            ("Parking", "Parking at the Norrhaven terminal costs €12 per day."),
        ],
    )
    FaqEntryFactory(
        assistant=link.assistant,
        question="How long is a ticket valid?",
        answer="A single ticket is valid for 30 days from the day you buy it.",
    )
    return link


def test_a_value_from_the_neighbouring_row_is_refused_and_the_rewrite_names_the_row(harbour, llm_settings):
    message = ask(harbour, "How much is a large locker per day?")
    llm_settings.push(text("A large locker costs €4 per day."), text("A large locker costs €8 per day."))
    assert run_for_message(message_id=message.id) == "reply"
    assert replies(message) == ["A large locker costs €8 per day."]
    correction = system_prompt(llm_settings.requests[1])
    assert (
        "'4' comes from 'Item: Small locker; Fee: €4 per day', which is about something else; what the sources "
        "say about what was asked: 'Fees > Lockers: Item: Large locker; Fee: €8 per day'"
    ) in correction
    span = SpanRecord.objects.get(name=sc.SPAN_KNOWLEDGE)
    assert json.loads(span.attributes[sc.CAPTAIN_KNOWLEDGE_UNSUPPORTED]) == [
        ["4 (a source's value for something else)"]
    ]
    assert Run.objects.get().credit_used is True


def test_a_wrong_row_twice_gets_the_customer_the_row_asked_for_as_written(harbour, llm_settings):
    message = ask(harbour, "What does a large locker cost?")
    llm_settings.push(text("A large locker costs €4 per day."), text("Large lockers are €4 per day."))
    assert run_for_message(message_id=message.id) == "reply"
    assert replies(message) == ["Item: Large locker; Fee: €8 per day"]
    span = SpanRecord.objects.get(name=sc.SPAN_KNOWLEDGE)
    assert span.attributes[sc.CAPTAIN_KNOWLEDGE_ACTION] == "evidence_answer"


def test_a_chinese_question_over_english_sources_is_answered_in_chinese(harbour, llm_settings):
    message = ask(harbour, "车票有效期多久？")
    llm_settings.push(
        text("A single ticket is valid for 30 days."),
        text("单程票自购买之日起30天内有效。"),
    )
    assert run_for_message(message_id=message.id) == "reply"
    assert replies(message) == ["单程票自购买之日起30天内有效。"]
    first = system_prompt(llm_settings.requests[0])
    assert "in the customer's language (Chinese, whatever the language of the sources)" in first
    assert "the reply must be in Chinese" in system_prompt(llm_settings.requests[1])


def test_a_promised_transfer_without_a_transfer_is_the_handoff_and_free(redis_url, llm_settings):
    link = AssistantInboxFactory()
    ScenarioFactory(assistant=link.assistant, key="billing", title="Billing", description="Invoices")
    message = ask(link, "my invoice is wrong")
    # The promise, then the re-ask that offers only the transfer tools and still gets none.
    llm_settings.push(text("I'll transfer you to our billing team now."), text("Transferring you now."))
    assert run_for_message(message_id=message.id) == "human_handoff"
    assert "I'll transfer you to our billing team now." not in replies(message)
    run = Run.objects.get()
    assert run.credit_used is False and CreditLedgerEntry.objects.count() == 0
    assert Conversation.objects.get(pk=message.conversation_id).status == Conversation.Status.OPEN


class OrderApi:
    """The shop's order API on 127.0.0.1: one order, shipped."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                payload = json.dumps({"order_id": "1042", "status": "shipped", "eta": "2026-12-02"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def orders(db, redis_url, llm_settings, settings) -> Iterator[Conversation]:
    settings.HELPDESK = {
        **settings.HELPDESK,
        "OUTBOUND_ALLOWED_HOSTS": ["127.0.0.1"],
        "OUTBOUND_ALLOW_HTTP": True,
    }
    api = OrderApi()
    api.thread.start()
    link = AssistantInboxFactory()  # no knowledge at all: tools only
    CustomTool.objects.create(
        account=link.assistant.account,
        name="order_status",
        description="Look up an order.",
        parameters={
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
        method="GET",
        url_template=f"{api.url}/orders/{{{{ order_id }}}}",
    )
    ScenarioFactory(assistant=link.assistant, key="orders", title="Orders", tools=["order_status"])
    try:
        yield ConversationFactory(contact_inbox__inbox=link.inbox, ai_agent_key="orders")
    finally:
        api.server.shutdown()
        api.server.server_close()


def test_a_tool_only_assistants_invented_order_number_is_refused(orders, llm_settings):
    message = MessageFactory(conversation=orders, content="where is order 1042?", reply_job="pending")
    lookup = tool_call("order_status", {"order_id": "1042"})
    llm_settings.push(
        lookup,
        text("Order 1042 has shipped with tracking number 7731-2290."),
        lookup,
        text("Your order 1042 shipped, tracking 7731-2290."),
    )
    assert run_for_message(message_id=message.id) == "human_handoff"
    assert replies(message) == [HONEST_EN]
    run = Run.objects.get()
    assert run.credit_used is False and "7731-2290" in run.detail


def test_a_tool_only_assistants_reply_from_the_tool_result_is_sent(orders, llm_settings):
    message = MessageFactory(conversation=orders, content="where is order 1042?", reply_job="pending")
    llm_settings.push(
        tool_call("order_status", {"order_id": "1042"}),
        text("Order 1042 has shipped and should arrive on 2026-12-02."),
    )
    assert run_for_message(message_id=message.id) == "reply"
    assert replies(message) == ["Order 1042 has shipped and should arrive on 2026-12-02."]
    assert Run.objects.get().credit_used is True
