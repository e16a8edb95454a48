"""The debug log shows what the AI team did besides talking: plan states, thoughts, each custom tool's HTTP
request and response, the run's artifacts, confirmations asked and answered, text-protocol errors. And it never
shows a credential, even one a careless client recorded before redacting it."""

from __future__ import annotations

import base64
import datetime as dt
import json

import pytest
from django.utils import timezone

from captain.actions.models import CustomTool, Plan, ToolConfirmation
from captain.answering.models import RunArtifact, SpanRecord
from captain.crypto import secret_encrypt
from captain.runtime import semconv as sc
from captain.runtime import tracing as tr
from helpdesk.models import Membership
from tests.factories import (
    AccountFactory,
    ConversationFactory,
    InboxFactory,
    MembershipFactory,
    MessageFactory,
    RunFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

BEARER = "sk-live-Bearer-7f3a9c1e5d"
"""The custom tool's stored secret."""
API_KEY = "qk-ApiKeyInQuery-99x"
BASIC_PASSWORD = "hunter2-basic-Pw"
XSS = "<script>window.__xss=1</script>"


@pytest.fixture
def scene(redis_url):
    account = AccountFactory(name="Acme")
    admin = UserFactory(username="alice")
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    CustomTool.objects.create(
        account=account,
        name="refund_order",
        description="Refund an order.",
        method="POST",
        url_template="https://shop.example/refunds",
        auth_type="bearer",
        secret_encrypted=secret_encrypt(BEARER),
    )
    CustomTool.objects.create(
        account=account,
        name="get_order",
        description="Look up an order.",
        url_template="https://shop.example/orders/{{ order_id }}",
        auth_type="basic",
        auth_username="shopbot",
        secret_encrypted=secret_encrypt(BASIC_PASSWORD),
    )
    conversation = ConversationFactory(contact_inbox__inbox=InboxFactory(account=account))
    trigger = MessageFactory(conversation=conversation, content="Refund order 1042 please")
    reply = MessageFactory(
        conversation=conversation, content="Refund 20 EUR for order 1042? Reply yes or no."
    )
    run = RunFactory(conversation=conversation, trigger_message=trigger, reply_message=reply)
    answer = MessageFactory(conversation=conversation, content="yes")
    later_run = RunFactory(conversation=conversation, trigger_message=answer)
    _spans(run.trace_id)
    RunArtifact.objects.create(
        account=account, run=run, ref="A1", tool_name="list_orders", content="order 1042 " * 300, size=3300
    )
    RunArtifact.objects.create(
        account=account,
        run=run,
        ref="A2",
        tool_name="get_order",
        content=f"raw body that echoed the key {BEARER} {XSS}",
        size=60,
    )
    ToolConfirmation.objects.create(
        account=account,
        conversation=conversation,
        agent_key="refunds",
        tool_name="refund_order",
        arguments={"order_id": "1042", "amount": 20},
        question="Refund 20 EUR for order 1042?",
        status=ToolConfirmation.Status.CONFIRMED,
        asked_message=reply,
        answer_message=answer,
        result='{"refunded": 20}',
        decided_at=timezone.now(),
    )
    Plan.objects.create(
        account=account,
        conversation=conversation,
        agent_key="refunds",
        goal="Refund order 1042",
        steps=[{"text": "Look up order 1042", "done": True}, {"text": "Refund 20 EUR", "done": False}],
        status=Plan.Status.WAITING,
        waiting_for="the customer's yes to the refund",
        tool_calls=2,
        history=[{"goal": "Refund order 1042", "steps": [{"text": "Look up order 1042", "done": False}]}],
    )
    return {"account": account, "admin": admin, "conversation": conversation, "run": run, "later": later_run}


def _spans(trace_id: str) -> None:
    t0 = timezone.now()

    def at(ms: int) -> dt.datetime:
        return t0 + dt.timedelta(milliseconds=ms)

    plan_state = {
        "goal": "Refund order 1042",
        "steps": [{"text": "Look up order 1042", "done": True}, {"text": "Refund 20 EUR", "done": False}],
        "status": "waiting",
        "waiting_for": "the customer's yes to the refund",
        "tool_calls": 2,
    }
    rows = [
        ("0000000000000001", "", sc.SPAN_RUN, {sc.CAPTAIN_RUN_OUTCOME: "reply"}, []),
        (
            "0000000000000002",
            "0000000000000001",
            sc.SPAN_AGENT,
            {sc.GEN_AI_AGENT_ID: "refunds", sc.GEN_AI_AGENT_NAME: "Refunds"},
            [
                {
                    "name": tr.EVENT_THOUGHT,
                    "attributes": {
                        sc.GEN_AI_AGENT_ID: "refunds",
                        tr.CAPTAIN_THOUGHT_TEXT: f"I should look the order up first. {XSS}",
                    },
                },
                {
                    "name": tr.EVENT_PLAN,
                    "attributes": {
                        sc.GEN_AI_AGENT_ID: "refunds",
                        tr.CAPTAIN_PLAN_ACTION: "update_plan",
                        tr.CAPTAIN_PLAN_STATUS: "waiting",
                        tr.CAPTAIN_PLAN_STEPS_DONE: 1,
                        tr.CAPTAIN_PLAN_STEPS_TOTAL: 2,
                        tr.CAPTAIN_PLAN_STATE: json.dumps(plan_state),
                    },
                },
                {
                    "name": tr.EVENT_ARTIFACT,
                    "attributes": {tr.CAPTAIN_ARTIFACT_REF: "A1", tr.CAPTAIN_ARTIFACT_TOOL: "list_orders"},
                },
                {
                    "name": tr.EVENT_CONFIRMATION,
                    "attributes": {
                        tr.CAPTAIN_CONFIRMATION_TOOL: "refund_order",
                        tr.CAPTAIN_CONFIRMATION_STATUS: "asked",
                        tr.CAPTAIN_CONFIRMATION_QUESTION: "Refund 20 EUR for order 1042?",
                    },
                },
                {
                    "name": tr.EVENT_PROTOCOL_ERROR,
                    "attributes": {tr.CAPTAIN_PROTOCOL_ERROR: "unclosed <action> tag"},
                },
            ],
        ),
        (
            "0000000000000003",
            "0000000000000002",
            sc.SPAN_TOOL,
            {
                sc.GEN_AI_TOOL_NAME: "get_order",
                sc.CAPTAIN_TOOL_ARGUMENTS: '{"order_id": "1042"}',
                # A tool result that echoed the secret back: the page replaces every known secret.
                sc.CAPTAIN_TOOL_RESULT: f'{{"status": "delivered", "debug": "token {BEARER}"}}',
            },
            [],
        ),
        (
            "0000000000000004",
            "0000000000000003",
            sc.SPAN_HTTP_TOOL,
            {
                sc.CAPTAIN_HTTP_METHOD: "GET",
                sc.CAPTAIN_HTTP_URL: f"https://shop.example/orders/1042?api_key={API_KEY}&expand=items",
                sc.CAPTAIN_HTTP_STATUS_CODE: 200,
                # Careless: recorded before redaction (a credential header and an unknown key header).
                sc.CAPTAIN_HTTP_REQUEST_HEADERS: json.dumps(
                    {
                        "Accept": "application/json",
                        "Authorization": "Basic "
                        + base64.b64encode(f"shopbot:{BASIC_PASSWORD}".encode()).decode(),
                        "X-Shop-Key": "zz-unknown-header-secret",
                    }
                ),
                sc.CAPTAIN_HTTP_RESPONSE_BODY: '{"order_id": "1042", "status": "delivered", "paid": 20}',
                sc.CAPTAIN_HTTP_ATTEMPTS: 1,
            },
            [],
        ),
        (
            "0000000000000005",
            "0000000000000002",
            sc.SPAN_HTTP_TOOL,
            {
                sc.CAPTAIN_HTTP_METHOD: "POST",
                sc.CAPTAIN_HTTP_URL: "https://shop.example/refunds",
                sc.CAPTAIN_HTTP_STATUS_CODE: 500,
                sc.CAPTAIN_HTTP_REQUEST_HEADERS: json.dumps({"Authorization": f"Bearer {BEARER}"}),
                sc.CAPTAIN_HTTP_REQUEST_BODY: '{"order_id": "1042", "amount": 20}',
                sc.CAPTAIN_HTTP_RESPONSE_BODY: "<html>Internal error</html>",
                sc.CAPTAIN_HTTP_ERROR: "the service answered HTTP 500",
            },
            [],
        ),
    ]
    for n, (span_id, parent, name, attributes, events) in enumerate(rows):
        SpanRecord.objects.create(
            trace_id=trace_id,
            span_id=span_id,
            parent_span_id=parent,
            name=name,
            start_time=at(n * 10),
            end_time=at(n * 10 + 5),
            status="OK",
            attributes=attributes,
            events=events,
        )


def page(client, scene) -> str:
    client.force_login(scene["admin"])
    url = f"/app/accounts/{scene['account'].id}/conversations/{scene['conversation'].id}/runs/"
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def section(html: str, run_id: int) -> str:
    start = html.index(f'id="run-{run_id}"')
    end = html.find('<section class="run"', start + 1)
    return html[start : end if end != -1 else len(html)]


def test_the_log_shows_plans_thoughts_http_exchanges_artifacts_confirmations_and_protocol_errors(
    client, scene
):
    html = page(client, scene)
    run = section(html, scene["run"].id)
    # Plan states: the steps with their done marks, the status and what it waits for.
    assert "Plan states (1)" in run
    assert 'class="step-done"><span aria-label="done">☑</span> Look up order 1042' in run
    assert 'class="step-open"><span aria-label="to do">☐</span> Refund 20 EUR' in run
    assert "waiting for:</span> <b>the customer&#x27;s yes to the refund</b>" in run
    # The thought, escaped.
    assert "I should look the order up first." in run and XSS not in html
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in run
    # Each HTTP request of a custom tool and its response.
    assert "HTTP GET https://shop.example/orders/1042" in run
    assert "HTTP POST https://shop.example/refunds" in run
    assert "Accept: application/json" in run
    assert "status 500" in run and "the service answered HTTP 500" in run
    assert "{\n  &quot;order_id&quot;: &quot;1042&quot;,\n  &quot;amount&quot;: 20\n}" in run  # request body
    assert "&lt;html&gt;Internal error&lt;/html&gt;" in run
    assert "HTTP requests: <b>2</b>" in run
    # Artifacts: ref, tool, size, content behind a <details>.
    assert "Artifacts (2)" in run
    assert "<b>A1</b> · list_orders · 3300 characters" in run and "order 1042 order 1042" in run
    # The confirmation this run asked, then (in the next run) answered; the protocol error.
    assert "Confirmations (1)" in run and "Refund 20 EUR for order 1042?" in run
    assert '<span class="kind">asked</span> <b>refund_order</b>' in run
    assert "unclosed &lt;action&gt; tag" in run
    later = section(html, scene["later"].id)
    assert (
        '<span class="kind">answered</span> <b>refund_order</b> · <span class="status">Confirmed and run</span>'
        in later
    )
    # The conversation's plan as stored now, with its earlier state.
    assert "<h2>Plans</h2>" in html and "Earlier states (1)" in html


def test_no_credential_ever_reaches_the_page(client, scene):
    html = page(client, scene)
    basic_token = base64.b64encode(f"shopbot:{BASIC_PASSWORD}".encode()).decode()
    for secret in (BEARER, BASIC_PASSWORD, basic_token, API_KEY, "zz-unknown-header-secret"):
        assert secret not in html, secret
    # What was there is still readable, with the values replaced.
    assert "Authorization: [redacted]" in html
    assert "X-Shop-Key: [redacted]" in html
    assert "api_key=[redacted]" in html and "expand=items" in html
    assert "raw body that echoed the key [redacted]" in html  # artifact content
    assert "token [redacted]" in html  # the tool result
    # The raw HTTP attributes are not repeated in the "All attributes" list.
    assert sc.CAPTAIN_HTTP_REQUEST_HEADERS not in html


def test_no_live_panel_when_no_run_is_in_progress_and_one_while_a_run_holds_the_lock(client, scene):
    from captain.answering.services.locks import conversation_lock

    assert 'id="live-panel"' not in page(client, scene)
    lease = conversation_lock(scene["conversation"].id)
    assert lease.acquire()
    try:
        html = page(client, scene)
    finally:
        lease.release()
    live_url = f"/app/accounts/{scene['account'].id}/conversations/{scene['conversation'].id}/live"
    assert f'data-live-url="{live_url}"' in html
    assert "captain/live.js" in html


def test_another_tenant_cannot_read_it(client, scene):
    other = AccountFactory(name="Globex")
    mallory = UserFactory(username="mallory")
    MembershipFactory(account=other, user=mallory, role=Membership.Role.ADMIN)
    client.force_login(mallory)
    url = f"/app/accounts/{scene['account'].id}/conversations/{scene['conversation'].id}/runs/"
    assert client.get(url).status_code == 404
    assert (
        client.get(f"/app/accounts/{other.id}/conversations/{scene['conversation'].id}/runs/").status_code
        == 404
    )


MAX_QUERIES_WITHOUT_ACTIONS = 10
"""The debug log's budget (tests/dashboard/test_captain_pages.py): a conversation with no plan, artifact,
confirmation or credential costs no query for them."""
MAX_QUERIES_WITH_ACTIONS = MAX_QUERIES_WITHOUT_ACTIONS + 5


def _queries(client, url: str) -> int:
    from django.db import connection

    client.get(url)  # warm: session and account switch writes happen on the first visit
    executed: list[str] = []

    def record(execute, sql, params, many, context):
        executed.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        assert client.get(url).status_code == 200
    return len(executed)


def test_the_actions_cost_a_bounded_number_of_queries(client, scene, redis_url):
    client.force_login(scene["admin"])
    busy = f"/app/accounts/{scene['account'].id}/conversations/{scene['conversation'].id}/runs/"
    assert _queries(client, busy) <= MAX_QUERIES_WITH_ACTIONS
    quiet_conversation = ConversationFactory(contact_inbox__inbox=scene["conversation"].inbox)
    for _ in range(3):
        RunFactory(conversation=quiet_conversation)
    CustomTool.objects.filter(account=scene["account"]).delete()
    quiet = f"/app/accounts/{scene['account'].id}/conversations/{quiet_conversation.id}/runs/"
    assert _queries(client, quiet) <= MAX_QUERIES_WITHOUT_ACTIONS
