"""The agents' copilot end to end in process: the start view queues a run, the task body (run here, as a worker
would) asks the scripted model over real HTTP with the assistant's knowledge in the prompt, streams the text on
the live channel of a real redis-server, stores the result with its sources and charges it once; failures are
not charged; another account never reaches a run; the debug log lists the runs with their spans."""

from __future__ import annotations

import json

import pytest

from captain.answering.models import CreditBalance, CreditLedgerEntry, SpanRecord
from captain.answering.services.credits import credit_balance_for, credit_copilot_debit
from captain.answering.services.live import LiveSubscription
from captain.copilot.models import CopilotRun
from captain.copilot.services import copilot as copilot_service
from captain.copilot.services.copilot import copilot_run_execute, copilot_scope
from captain.copilot.tasks import copilot_generate
from helpdesk.models import Message
from tests.factories import AssistantInboxFactory, ConversationFactory, FaqEntryFactory, MessageFactory
from tests.support import fake_llm_server as fake

pytestmark = pytest.mark.django_db

REFUND_ANSWER = "Refunds reach your card within 5 business days."


def start_url(acme, conversation=None) -> str:
    conversation = conversation or acme["conversation"]
    return f"/app/accounts/{acme['account'].id}/conversations/{conversation.id}/copilot/"


def start(client, acme, kind: str, text: str = "", *, capture) -> dict:
    with capture(execute=False) as callbacks:
        response = client.post(start_url(acme), {"kind": kind, "text": text})
    assert response.status_code == 202, response.content
    assert len(callbacks) == 1  # the task is queued once the run row is committed
    return response.json()


def customer_says(acme, text: str) -> Message:
    return MessageFactory(conversation=acme["conversation"], content=text)


def prompt(request: dict) -> tuple[str, str]:
    messages = request["messages"]
    return messages[0]["content"], messages[-1]["content"]


def test_a_draft_is_grounded_in_the_knowledge_streams_and_is_charged_once(
    client, acme, django_capture_on_commit_callbacks
):
    FaqEntryFactory(
        assistant=acme["assistant"], question="How long does a refund take?", answer=REFUND_ANSWER
    )
    FaqEntryFactory(
        assistant=acme["assistant"], question="Do you ship to Norway?", answer="We ship to Norway."
    )
    customer_says(acme, "How long does a refund take? I returned my shoes.")
    MessageFactory(
        conversation=acme["conversation"],
        content="internal: customer is a reseller, do not promise anything",
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.USER,
        private=True,
    )
    draft = "Your refund reaches your card within 5 business days [1]."
    acme["model"].push(
        fake.streamed(draft, chunks=["Your refund reaches ", "your card within ", "5 business days [1]."])
    )
    client.force_login(acme["agent"])  # an agent, not only administrators, may use the copilot

    started = start(client, acme, "draft", capture=django_capture_on_commit_callbacks)
    run = CopilotRun.objects.get(pk=started["id"])
    assert run.status == CopilotRun.Status.QUEUED and run.user == acme["agent"]
    assert started["stream_url"].endswith(f"/copilot/runs/{run.pk}/stream")

    subscription = LiveSubscription(copilot_scope(run.pk))
    try:
        assert copilot_generate.apply(args=(run.pk,)).get() == "done"
        published = list(subscription.messages(timeout=1.0))
    finally:
        subscription.close()

    (request,) = acme["model"].requests
    system, user = prompt(request)
    assert request["stream"] is True
    assert "write the reply the agent could send" in system
    assert REFUND_ANSWER in user  # the knowledge found is put before the model...
    assert "How long does a refund take? I returned my shoes." in user
    assert "reseller" not in user  # ...private notes are not
    pieces = [m["text"] for m in published if m["type"] == "thought"]
    assert "".join(pieces) == draft and len(pieces) == 3
    assert published[-1]["type"] == "end"

    run.refresh_from_db()
    assert run.status == CopilotRun.Status.DONE and run.output == draft
    assert run.credit_used is True and run.llm_calls == 1 and run.input_tokens > 0
    assert run.sources[0]["title"] == "How long does a refund take?"
    assert all("text" not in s for s in run.sources)

    status = client.get(started["status_url"]).json()
    assert status["finished"] is True and status["status"] == "done"
    assert status["output"] == draft
    assert status["sources"][0]["title"] == "How long does a refund take?"

    charges = CreditLedgerEntry.objects.filter(copilot_run=run)
    assert [(c.kind, c.amount, c.message_id) for c in charges] == [("copilot", 1, None)]
    assert credit_balance_for(acme["account"].id).used == 1
    # A redelivered task (a killed worker) does nothing; a second debit of the same run charges nothing more.
    assert copilot_run_execute(run_id=run.pk) == "already_done"
    assert credit_copilot_debit(run=run, amount=1) is True
    assert CreditLedgerEntry.objects.filter(copilot_run=run).count() == 1
    assert credit_balance_for(acme["account"].id).used == 1
    assert len(acme["model"].requests) == 1


@pytest.mark.parametrize(
    ("kind", "text", "instruction", "answer"),
    [
        ("summary", "", "summarise the conversation", "- Customer wants a refund for order 1042."),
        (
            "rephrase",
            "we cant refund that sorry",
            "rephrase the agent's text",
            "I'm sorry, we can't refund that.",
        ),
        (
            "fix_tone",
            "read the manual!!",
            "friendly, calm and professional",
            "The manual explains it step by step.",
        ),
        (
            "translate",
            "Your parcel left today.",
            "the language the customer writes in",
            "Ihr Paket ging heute raus.",
        ),
    ],
)
def test_each_kind_asks_its_own_task_and_lands_in_the_run(
    client, acme, django_capture_on_commit_callbacks, kind, text, instruction, answer
):
    customer_says(acme, "Wo ist mein Paket? Bestellung 1042.")
    MessageFactory(
        conversation=acme["conversation"],
        content="Ich schaue nach.",
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.ASSISTANT,
    )
    acme["model"].push(fake.text(answer))
    client.force_login(acme["agent"])
    started = start(client, acme, kind, text, capture=django_capture_on_commit_callbacks)
    assert copilot_run_execute(run_id=started["id"]) == "done"

    (request,) = acme["model"].requests
    system, user = prompt(request)
    assert instruction in system
    assert "Customer: Wo ist mein Paket? Bestellung 1042." in user
    assert "AI assistant: Ich schaue nach." in user
    if text:
        assert f"The agent's text:\n<<<\n{text}\n>>>" in user
    else:
        assert "The agent's text" not in user
    assert "Knowledge found" not in user  # only a draft searches the knowledge
    result = client.get(started["status_url"]).json()
    assert (result["status"], result["output"], result["sources"]) == ("done", answer, [])
    assert CreditLedgerEntry.objects.filter(kind="copilot").count() == 1


def test_a_rewrite_needs_text_and_an_unknown_kind_is_refused(client, acme):
    client.force_login(acme["agent"])
    response = client.post(start_url(acme), {"kind": "translate", "text": "   "})
    assert response.status_code == 400
    assert "Type your text in the reply box first" in response.json()["error"]
    assert client.post(start_url(acme), {"kind": "poem"}).status_code == 400
    assert not CopilotRun.objects.exists()


def test_a_failed_model_call_is_not_charged_and_says_why(client, acme, django_capture_on_commit_callbacks):
    customer_says(acme, "Where is my order?")
    acme["model"].push(fake.error(500))
    client.force_login(acme["agent"])
    started = start(client, acme, "draft", capture=django_capture_on_commit_callbacks)
    assert copilot_run_execute(run_id=started["id"]) == "failed"
    result = client.get(started["status_url"]).json()
    assert result["finished"] and result["status"] == "failed" and result["output"] == ""
    assert result["error"] == copilot_service.MODEL_FAILED
    assert not CreditLedgerEntry.objects.exists()
    assert credit_balance_for(acme["account"].id).used == 0
    run = CopilotRun.objects.get()
    assert run.credit_used is False
    assert SpanRecord.objects.filter(trace_id=run.trace_id, name="captain.copilot", status="ERROR").exists()


def test_an_account_out_of_credits_gets_a_clear_refusal_and_no_model_call(
    client, acme, django_capture_on_commit_callbacks
):
    customer_says(acme, "Where is my order?")
    balance = credit_balance_for(acme["account"].id)
    CreditBalance.objects.filter(pk=balance.pk).update(limit=5, used=5)
    client.force_login(acme["agent"])
    started = start(client, acme, "summary", capture=django_capture_on_commit_callbacks)
    assert copilot_run_execute(run_id=started["id"]) == "failed"
    assert acme["model"].requests == []
    result = client.get(started["status_url"]).json()
    assert result["error"] == copilot_service.NO_CREDITS
    assert "no credits left" in result["error"]
    assert not CreditLedgerEntry.objects.exists()


def test_the_charge_is_refused_under_the_lock_when_credits_ran_out_meanwhile(
    client, acme, django_capture_on_commit_callbacks, monkeypatch
):
    """The balance was fine when the run started; by the time the text came back another run had used the last
    credit. The text is not stored and not charged: the agent reads why. (The early check is made to pass on
    an exhausted balance, standing in for that other run: the race cannot be timed in one test process.)"""
    customer_says(acme, "Where is my order?")
    balance = credit_balance_for(acme["account"].id)
    CreditBalance.objects.filter(pk=balance.pk).update(limit=1, used=1)
    monkeypatch.setattr(copilot_service, "credit_copilot_affordable", lambda **kwargs: True)
    acme["model"].push(fake.text("A draft nobody pays for."))
    client.force_login(acme["agent"])
    started = start(client, acme, "summary", capture=django_capture_on_commit_callbacks)
    assert copilot_run_execute(run_id=started["id"]) == "failed"
    assert len(acme["model"].requests) == 1
    run = CopilotRun.objects.get()
    assert run.output == "" and run.error == copilot_service.NO_CREDITS and not run.credit_used
    assert not CreditLedgerEntry.objects.exists()
    assert credit_balance_for(acme["account"].id).used == 1


def test_another_account_never_reaches_the_copilot_or_its_runs(client, acme, other):
    run = CopilotRun.objects.create(
        account=acme["account"],
        assistant=acme["assistant"],
        conversation=acme["conversation"],
        kind="draft",
        status="done",
        output="Acme's private draft",
    )
    client.force_login(other["admin"])
    ours = acme["account"].id
    # Acme's URLs: Globex's administrator is not a member (404, never 403).
    assert client.post(start_url(acme), {"kind": "summary"}).status_code == 404
    assert client.get(f"/app/accounts/{ours}/copilot/runs/{run.pk}/").status_code == 404
    assert client.get(f"/app/accounts/{ours}/copilot/runs/{run.pk}/stream").status_code == 404
    # Globex's own URLs with Acme's ids: not Globex's conversation or run.
    theirs = other["account"].id
    response = client.post(
        f"/app/accounts/{theirs}/conversations/{acme['conversation'].id}/copilot/", {"kind": "summary"}
    )
    assert response.status_code == 404
    assert client.get(f"/app/accounts/{theirs}/copilot/runs/{run.pk}/").status_code == 404
    assert client.get(f"/app/accounts/{theirs}/copilot/runs/{run.pk}/stream").status_code == 404
    assert CopilotRun.objects.count() == 1


def test_a_conversation_no_assistant_answers_has_no_copilot(client, acme):
    conversation = ConversationFactory(contact_inbox__inbox__account=acme["account"])
    client.force_login(acme["agent"])
    response = client.post(start_url(acme, conversation), {"kind": "summary"})
    assert response.status_code == 400
    assert "No AI assistant answers" in response.json()["error"]
    page = client.get(f"/app/accounts/{acme['account'].id}/conversations/{conversation.id}/")
    assert page.status_code == 200
    assert b'id="copilot"' not in page.content


def test_the_conversation_page_shows_the_copilot_under_the_reply_box(client, acme):
    client.force_login(acme["agent"])
    page = client.get(f"/app/accounts/{acme['account'].id}/conversations/{acme['conversation'].id}/")
    html = page.content.decode()
    assert 'id="copilot"' in html
    assert f'data-start-url="{start_url(acme)}"' in html
    form = html.index(
        # The action carries the list the conversation was opened from (the workspace's next-conversation flow).
        'action="/app/accounts/{}/conversations/{}/reply/'.format(acme["account"].id, acme["conversation"].id)
    )
    # Inside the reply form, under the composer's textarea.
    assert (
        form < html.index('name="content"', form) < html.index('id="copilot"') < html.index("</form>", form)
    )
    assert "captain/copilot.js" in html
    assert "1 credit each" in html


def test_the_debug_log_lists_the_copilot_runs_with_their_spans(
    client, acme, django_capture_on_commit_callbacks
):
    customer_says(acme, "Where is my order?")
    acme["model"].push(fake.text("- The customer asks where order 1042 is."))
    # The debug log is for administrators, and shows each its own copilot runs (test_copilot_owner.py).
    client.force_login(acme["admin"])
    started = start(client, acme, "summary", capture=django_capture_on_commit_callbacks)
    copilot_run_execute(run_id=started["id"])
    run = CopilotRun.objects.get()
    names = set(SpanRecord.objects.filter(trace_id=run.trace_id).values_list("name", flat=True))
    assert names == {"captain.copilot", "gen_ai.chat"}
    llm = SpanRecord.objects.get(trace_id=run.trace_id, name="gen_ai.chat")
    assert "Where is my order?" in json.dumps(llm.attributes)

    page = client.get(f"/app/accounts/{acme['account'].id}/conversations/{acme['conversation'].id}/runs/")
    html = page.content.decode()
    assert page.status_code == 200
    assert f'id="copilot-run-{run.pk}"' in html
    assert "Summarise the conversation" in html
    assert "The customer asks where order 1042 is." in html
    assert "gen_ai.chat" in html or "LLM" in html  # the model call's span is in the run's tree
    assert "asked by alice" in html


def test_the_debug_log_of_another_account_does_not_show_our_copilot_runs(client, acme):
    theirs = AssistantInboxFactory()
    their_conversation = ConversationFactory(contact_inbox__inbox=theirs.inbox)
    CopilotRun.objects.create(
        account=theirs.assistant.account,
        assistant=theirs.assistant,
        conversation=their_conversation,
        kind="summary",
        status="done",
        output="Globex summary",
    )
    client.force_login(acme["admin"])
    page = client.get(f"/app/accounts/{acme['account'].id}/conversations/{acme['conversation'].id}/runs/")
    assert b"Globex summary" not in page.content and b"copilot-runs" not in page.content
