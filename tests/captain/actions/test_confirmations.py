"""A side-effecting custom tool across two customer messages: held with a question, run as stored on "yes",
never run on "no" or on anything else. The real run path: `run_for_message`, the `openai` SDK over HTTP against
the scripted model server, a real Redis lock, and a real HTTP shop on 127.0.0.1 the tool calls."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from captain.actions.models import CustomTool, Plan, ToolConfirmation
from captain.actions.services.confirmations import customer_answer
from captain.actions.services.custom_tools import custom_tool_set_secret
from captain.answering.models import CreditLedgerEntry, Run
from captain.answering.services.runs import run_for_message
from helpdesk.models import Message
from tests.factories import AssistantInboxFactory, ConversationFactory, MessageFactory, ScenarioFactory
from tests.support.fake_llm_server import text, tool_call


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        ("yes", "yes"),
        ("Yes please!", "yes"),
        ("yse", "yes"),
        ("ok, go ahead", "yes"),
        ("Sure, thanks", "yes"),
        ("好的", "yes"),
        ("是的，请确认", "yes"),
        ("可以的谢谢", "yes"),
        ("no", "no"),
        ("No thanks", "no"),
        ("don't do it", "no"),
        ("wait", "no"),
        ("取消", "no"),
        ("不要", "no"),
        ("yes but only 10 euros", "other"),
        ("what is the refund policy?", "other"),
        ("yes, and also cancel order 1005", "other"),
        ("", "other"),
    ],
)
def test_only_a_message_that_says_nothing_but_yes_confirms(said: str, answer: str) -> None:
    assert customer_answer(said) == answer


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        ("yes cancel it", "yes"),
        ("Yes, cancel order 1006 please", "yes"),
        ("ok do it now", "yes"),
        ("yes cancel order 1005", "other"),  # another order than the one asked about
        ("yes and refund it too", "other"),
        ("yes but only 10 euros", "other"),
    ],
)
def test_a_yes_may_repeat_the_question_but_say_nothing_new(said: str, answer: str) -> None:
    assert customer_answer(said, "Cancel order 1006? Reply yes or no.") == answer


class Shop:
    """The customer's shop API: records every request it gets."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        shop = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                shop.requests.append(
                    {"path": self.path, "json": json.loads(body), "auth": self.headers.get("Authorization")}
                )
                payload = json.dumps({"refunded": True, "order_id": "1042"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Shop:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def shop() -> Iterator[Shop]:
    with Shop() as server:
        yield server


@pytest.fixture
def setup(db, redis_url, llm_settings, shop, settings):
    settings.HELPDESK = {
        **settings.HELPDESK,
        "OUTBOUND_ALLOWED_HOSTS": ["127.0.0.1"],
        "OUTBOUND_ALLOW_HTTP": True,
    }
    link = AssistantInboxFactory()
    assistant = link.assistant
    tool = CustomTool.objects.create(
        account=assistant.account,
        name="refund_order",
        description="Refund an order.",
        parameters={
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["order_id", "amount"],
        },
        method="POST",
        url_template=f"{shop.url}/orders/{{{{ order_id }}}}/refund",
        auth_type=CustomTool.Auth.BEARER,
        confirmation_template="Refund {{ amount }} EUR for order {{ order_id }}? Reply yes or no.",
    )
    custom_tool_set_secret(tool, "shop-secret-token")
    tool.save()
    ScenarioFactory(
        assistant=assistant, key="refunds", title="Refunds", tools=["refund_order"], mode="planning"
    )
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox, ai_agent_key="refunds")
    return {"assistant": assistant, "conversation": conversation}


def _say(conversation, content: str) -> str:
    message = MessageFactory(conversation=conversation, content=content, reply_job="pending")
    return run_for_message(message_id=message.id)


def _replies(conversation) -> list[Message]:
    return list(
        conversation.messages.filter(message_type=Message.Type.OUTGOING, private=False).order_by("id")
    )


def _ask_for_the_refund(setup, llm_settings, shop) -> None:
    llm_settings.push(
        tool_call(
            "update_plan", {"steps": ["Refund 20 EUR for order 1042", "Tell the customer"], "next": "refund"}
        ),
        tool_call("refund_order", {"order_id": "1042", "amount": 20}),
    )
    assert _say(setup["conversation"], "please refund 20 euros for order 1042") == "reply"
    question = _replies(setup["conversation"])[-1]
    assert question.content == "Refund 20 EUR for order 1042? Reply yes or no."
    assert question.quick_replies == ["Yes", "No"]
    assert shop.requests == []  # nothing changed before the customer confirmed
    held = ToolConfirmation.objects.get()
    assert held.status == "pending" and held.arguments == {"order_id": "1042", "amount": 20}
    assert held.asked_message_id == question.id
    assert not CreditLedgerEntry.objects.filter(message=question).exists()  # a fixed question costs nothing
    plan = Plan.objects.get()
    assert plan.status == "waiting" and plan.waiting_for.startswith("confirmation:")


def test_yes_runs_the_stored_call_once_and_the_plan_resumes(setup, llm_settings, shop) -> None:
    _ask_for_the_refund(setup, llm_settings, shop)
    llm_settings.push(
        tool_call("update_plan", {"done": [1, 2], "next": "answer"}),
        tool_call("final_answer", {"answer": "20 EUR for order 1042 are on their way back to you."}),
    )
    assert _say(setup["conversation"], "yes please") == "reply"

    assert len(shop.requests) == 1
    assert shop.requests[0]["path"] == "/orders/1042/refund"
    assert shop.requests[0]["json"] == {"order_id": "1042", "amount": 20}
    assert shop.requests[0]["auth"] == "Bearer shop-secret-token"
    held = ToolConfirmation.objects.get()
    assert held.status == "confirmed" and '"refunded": true' in held.result
    # The model continued from the call's result, which it saw before writing anything.
    results = [m for m in llm_settings.requests[-2]["messages"] if m["role"] == "tool"]
    assert '"refunded": true' in results[-1]["content"]
    assert (
        _replies(setup["conversation"])[-1].content == "20 EUR for order 1042 are on their way back to you."
    )
    plan = Plan.objects.get()
    assert plan.status == "done" and all(step["done"] for step in plan.steps)
    assert Run.objects.order_by("-id").first().credit_used is True


@pytest.mark.parametrize(("said", "status"), [("no", "declined"), ("yes but only 10 euros", "lapsed")])
def test_anything_but_yes_runs_nothing(setup, llm_settings, shop, said: str, status: str) -> None:
    _ask_for_the_refund(setup, llm_settings, shop)
    llm_settings.push(tool_call("final_answer", {"answer": "Understood, no refund was made."}))
    assert _say(setup["conversation"], said) == "reply"

    assert shop.requests == []
    assert ToolConfirmation.objects.get().status == status
    told = [m for m in llm_settings.requests[-1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "nothing was done" in told


def test_the_secret_never_reaches_the_debug_log(setup, llm_settings, shop) -> None:
    from captain.answering.models import SpanRecord

    _ask_for_the_refund(setup, llm_settings, shop)
    llm_settings.push(text("Done."))
    _say(setup["conversation"], "yes")
    assert shop.requests[0]["auth"] == "Bearer shop-secret-token"
    stored = json.dumps([[s.attributes, s.events] for s in SpanRecord.objects.all()], default=str)
    assert "shop-secret-token" not in stored
    assert "captain.http_tool" in {s.name for s in SpanRecord.objects.all()}


def test_a_yes_after_a_person_wrote_meanwhile_runs_nothing(setup, llm_settings, shop) -> None:
    from helpdesk.services.messages import message_create_ai_reply

    _ask_for_the_refund(setup, llm_settings, shop)
    # Something else was said to the customer after the question: their "yes" no longer answers it.
    message_create_ai_reply(
        conversation=setup["conversation"], content="By the way, we close at 6.", agent_key="", agent_name=""
    )
    llm_settings.push(text("Glad to help."))
    _say(setup["conversation"], "yes")
    assert shop.requests == []
    assert ToolConfirmation.objects.get().status == "lapsed"
