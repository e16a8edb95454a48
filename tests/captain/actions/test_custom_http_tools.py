"""Custom HTTP tools against a real HTTP server on 127.0.0.1 (a tiny shop API started by the tests): templates
keep arguments as values, each auth kind, the contact's identity, retries only where safe, every bad answer a
clear ToolFailed, the secret nowhere it should not be, and a playground that changes nothing."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from captain.actions.models import CustomTool
from captain.actions.services.custom_tool_calls import custom_tool_call
from captain.actions.services.custom_tools import (
    custom_tool_save,
    custom_tool_set_secret,
    custom_tool_test_call,
)
from captain.actions.services.tools.http import custom_tools_for
from captain.answering.models import SpanRecord
from captain.crypto import secret_decrypt
from captain.runtime import RunContext, ToolFailed
from tests.factories import AccountFactory, ConversationFactory

pytestmark = pytest.mark.django_db

SECRET = "sk-live-TOPSECRET-9f8e7d"
ORDER_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
    "required": ["order_id"],
}


class ShopServer:
    """Records every request (method, raw path, headers, body) and answers by path."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.flaky_left = 0
        shop = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                shop.requests.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": body.decode(),
                    }
                )
                path = self.path.split("?")[0]
                if path.startswith("/orders/"):
                    order_id = path.removeprefix("/orders/")
                    self._send(200, {"order": {"id": order_id, "status": "shipped", "items": [1, 2]}})
                elif path == "/echo":
                    self._send(200, {"headers": dict(self.headers), "body": body.decode()})
                elif path == "/html":
                    self._send(200, b"<!doctype html><html><body>Login</body></html>", "text/html")
                elif path == "/big":
                    self._send(200, b"x" * 10_000_000, "application/json")
                elif path == "/slow":
                    time.sleep(2)
                    self._send(200, {"late": True})
                elif path == "/error500":
                    self._send(500, {"error": "boom"})
                elif path == "/flaky":
                    if shop.flaky_left > 0:
                        shop.flaky_left -= 1
                        self._send(503, {"error": "busy"})
                    else:
                        self._send(200, {"ok": True})
                elif path == "/redirect":
                    self.send_response(302)
                    self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif path == "/echo-secret-401":
                    self._send(401, {"error": f"bad credentials: {self.headers.get('Authorization')}"})
                else:
                    self._send(404, {"error": "no such thing"})

            def _send(self, status: int, payload: Any, content_type: str = "application/json") -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                # The client may refuse the body (size limit) and close the connection.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

            def log_message(self, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> ShopServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def shop() -> Iterator[ShopServer]:
    with ShopServer() as server:
        yield server


@pytest.fixture
def account():
    return AccountFactory()


def make_tool(account, shop: ShopServer, **fields: Any) -> CustomTool:
    secret = fields.pop("secret", None)
    values: dict[str, Any] = {
        "name": "order_status",
        "description": "Look up an order. Use it when the customer asks where the order is.",
        "parameters": ORDER_SCHEMA,
        "url_template": shop.base + "/orders/{{ order_id }}",
        **fields,
    }
    if not values["url_template"].startswith("http"):
        values["url_template"] = shop.base + values["url_template"]
    return custom_tool_save(account=account, fields=values, secret=secret)


# ---- templates -------------------------------------------------------------------------------------------------


def test_an_argument_stays_a_value_in_the_url(account, shop):
    tool = make_tool(account, shop)

    custom_tool_call(tool, {"order_id": "../admin?x=1#y"}, contact_identity=None)

    # One encoded path segment: no traversal, no query, no fragment came from the argument.
    assert shop.requests[-1]["path"] == "/orders/..%2Fadmin%3Fx%3D1%23y"


def test_body_values_are_json_encoded_and_cannot_break_out(account, shop):
    tool = make_tool(
        account,
        shop,
        name="refund",
        method="POST",
        url_template="/echo",
        body_template='{"order": {{ order_id }}, "amount": {{ amount }}, "note": "fixed"}',
    )
    hostile = 'x", "amount": 999999, "y": "'

    custom_tool_call(tool, {"order_id": hostile, "amount": 20}, contact_identity=None)

    sent = json.loads(shop.requests[-1]["body"])
    assert sent == {"order": hostile, "amount": 20, "note": "fixed"}
    assert shop.requests[-1]["headers"]["Content-Type"] == "application/json"


def test_an_empty_body_template_sends_the_arguments(account, shop):
    tool = make_tool(account, shop, name="refund", method="POST", url_template="/echo")

    custom_tool_call(tool, {"order_id": "1042", "amount": 20}, contact_identity=None)

    assert json.loads(shop.requests[-1]["body"]) == {"order_id": "1042", "amount": 20}


def test_response_path_and_template_choose_what_the_model_sees(account, shop):
    by_path = make_tool(account, shop, response_path="$.order.status")
    by_template = make_tool(
        account,
        shop,
        name="order_items",
        response_template="Order {{ order_id }} is {{ response.order.status }} "
        "({% for i in response.order['items'] %}{{ i }}{% endfor %})",
    )

    assert custom_tool_call(by_path, {"order_id": "7"}, contact_identity=None) == "shipped"
    assert (
        custom_tool_call(by_template, {"order_id": "7"}, contact_identity=None) == "Order 7 is shipped (12)"
    )


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"name": "faq_lookup"}, "name", "built-in"),
        ({"name": "handoff_to_billing"}, "name", "handoff"),
        ({"name": "Bad-Name"}, "name", "Lowercase"),
        ({"url_template": "http://{{ order_id }}/x"}, "url_template", "host"),
        ({"url_template": "http://169.254.169.254/latest/{{ order_id }}"}, "url_template", "refused"),
        ({"url_template": "/orders/{{ customer }}"}, "url_template", "unknown variable"),
        ({"url_template": "/orders/{{ order_id.__class__ }}"}, "url_template", "'_'"),
        ({"response_template": "{% for i in range(99999) %}{% endfor %}"}, "response_template", "Call"),
        ({"response_template": "{{ response }} {{ secret }}"}, "response_template", "unknown variable"),
        ({"method": "POST", "body_template": '{"id": "{{ order_id }}"}'}, "body_template", "JSON"),
        ({"body_template": '{"id": {{ order_id }}}'}, "body_template", "GET"),
        ({"parameters": {"type": "array"}}, "parameters", "object"),
        ({"parameters": {"type": "object", "properties": {"response": {}}}}, "parameters", "reserved"),
        ({"timeout_seconds": 31}, "timeout_seconds", "30"),
        ({"timeout_seconds": 0}, "timeout_seconds", "30"),
        ({"max_response_bytes": 2_000_000}, "max_response_bytes", "1 MB"),
        ({"auth_type": "api_key", "auth_header": "Host"}, "auth_header", "cannot be used"),
        ({"response_path": "$..[[["}, "response_path", "JSON path"),
    ],
)
def test_a_tool_is_checked_on_save(account, shop, fields, field, message):
    with pytest.raises(ValidationError) as caught:
        make_tool(account, shop, **fields)
    assert message in " ".join(caught.value.message_dict[field])
    assert not CustomTool.objects.exists()


# ---- authentication and identity -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "header", "expected"),
    [
        ({"auth_type": "bearer"}, "Authorization", f"Bearer {SECRET}"),
        (
            {"auth_type": "basic", "auth_username": "shop"},
            "Authorization",
            "Basic " + __import__("base64").b64encode(f"shop:{SECRET}".encode()).decode(),
        ),
        ({"auth_type": "api_key"}, "X-API-Key", SECRET),
        ({"auth_type": "api_key", "auth_header": "X-Shop-Token"}, "X-Shop-Token", SECRET),
    ],
)
def test_each_auth_kind_sends_the_secret_where_it_belongs(account, shop, fields, header, expected):
    tool = make_tool(account, shop, secret=SECRET, **fields)

    custom_tool_call(tool, {"order_id": "1"}, contact_identity=None)

    assert shop.requests[-1]["headers"][header] == expected
    assert tool.secret_encrypted and SECRET not in tool.secret_encrypted
    assert secret_decrypt(CustomTool.objects.get().secret_encrypted) == SECRET


def test_the_identity_header_is_the_conversations_contact_never_an_argument(account, shop):
    conversation = ConversationFactory(
        contact_inbox__inbox__account=account, contact_inbox__source_id="+4915112345"
    )
    make_tool(account, shop, identity_header="X-Customer")
    [tool] = custom_tools_for(account.id, ["order_status"])

    tool.function(RunContext(account.id, conversation.id), {"order_id": "1"})

    assert shop.requests[-1]["headers"]["X-Customer"] == "api:+4915112345"


def test_an_unreadable_secret_is_a_clear_tool_error(account, shop, settings):
    tool = make_tool(account, shop, auth_type="bearer")
    tool.secret_encrypted = "not-a-fernet-token"

    with pytest.raises(ToolFailed, match="secret cannot be read; enter it again"):
        custom_tool_call(tool, {"order_id": "1"}, contact_identity=None)
    assert shop.requests == []


# ---- retries ---------------------------------------------------------------------------------------------------


def test_get_is_retried_once_on_503_but_post_never(account, shop):
    get = make_tool(account, shop, url_template="/flaky", parameters={"type": "object"})
    post = make_tool(account, shop, name="refund", method="POST", url_template="/flaky", parameters={})

    shop.flaky_left = 1
    assert json.loads(custom_tool_call(get, {}, contact_identity=None)) == {"ok": True}
    assert [r["method"] for r in shop.requests] == ["GET", "GET"]

    shop.requests.clear()
    shop.flaky_left = 1
    with pytest.raises(ToolFailed, match="HTTP 503"):
        custom_tool_call(post, {}, contact_identity=None)
    assert [r["method"] for r in shop.requests] == ["POST"]


def test_a_connection_error_is_retried_for_get_only(account, shop):
    get = make_tool(account, shop)
    closed = "http://127.0.0.1:9/orders/{{ order_id }}"  # the discard port: nothing listens
    get.url_template = closed

    record = custom_tool_test_call(get, {"order_id": "1"})

    assert record["attempts"] == 2 and "could not be reached" in record["error"]
    get.method = "POST"
    assert custom_tool_test_call(get, {"order_id": "1"})["attempts"] == 1


# ---- bad answers -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"url_template": "/html"}, "the answer is HTML, not JSON"),
        ({"url_template": "/big", "max_response_bytes": 1_000_000}, "too large"),
        ({"url_template": "/slow", "timeout_seconds": 0.5}, "no answer within 0.5 s"),
        ({"url_template": "/error500"}, "the service answered HTTP 500"),
        ({"url_template": "/redirect"}, "redirect to another address, which is not followed"),
        ({"url_template": "/nothing-here"}, 'HTTP 404: {"error": "no such thing"}'),
    ],
)
def test_each_bad_answer_reaches_the_model_as_a_clear_tool_error(account, shop, fields, message):
    tool = make_tool(account, shop, parameters={"type": "object"}, **fields)
    [runtime_tool] = custom_tools_for(account.id, [tool.name])

    with pytest.raises(ToolFailed) as caught:
        runtime_tool.function(RunContext(account.id, None), {})

    assert message in str(caught.value)
    span = SpanRecord.objects.filter(name="captain.http_tool").last()
    assert span is not None and span.status == "ERROR"
    assert message in span.attributes["captain.http.error"]
    # The metadata address is never contacted: the redirect is not followed.
    assert all("169.254" not in r["path"] for r in shop.requests)


def test_a_refused_address_at_send_time_is_a_tool_error(account, shop, settings):
    tool = make_tool(account, shop)
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": []}  # the operator removed it

    with pytest.raises(ToolFailed, match="refused by the outbound policy"):
        custom_tool_call(tool, {"order_id": "1"}, contact_identity=None)
    assert shop.requests == []


# ---- the secret stays secret -----------------------------------------------------------------------------------


def test_the_secret_is_never_in_spans_logs_or_errors(account, shop, caplog, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "RECORD_CONTENT": True}
    caplog.set_level(logging.DEBUG)
    echo = make_tool(
        account,
        shop,
        url_template="/echo",
        secret=SECRET,
        auth_type="bearer",
        identity_header="X-Customer",
        parameters={},
    )
    leaky = make_tool(
        account, shop, name="leaky", url_template="/echo-secret-401", secret=SECRET, auth_type="bearer"
    )
    conversation = ConversationFactory(contact_inbox__inbox__account=account)
    identity = f"api:{conversation.contact_inbox.source_id}"
    custom_tool_set_secret(echo, SECRET)

    shown = custom_tool_call(echo, {}, contact_identity=identity)
    with pytest.raises(ToolFailed) as caught:
        custom_tool_call(leaky, {"order_id": "1"}, contact_identity=None)
    record = custom_tool_test_call(echo, {})

    assert f"Bearer {SECRET}" in json.dumps(shop.requests)  # it was really sent
    assert shop.requests[0]["headers"]["X-Customer"] == identity
    spans = list(SpanRecord.objects.filter(name="captain.http_tool").values_list("attributes", flat=True))
    assert len(spans) == 3
    assert json.loads(spans[0]["captain.http.request_headers"])["Authorization"] == "[redacted]"
    assert "captain.http.response_body" in spans[0]  # content recording on: the body is there, redacted
    for text in (json.dumps(spans), caplog.text, str(caught.value), shown, json.dumps(record)):
        assert SECRET not in text
    assert identity not in json.dumps(spans) and identity not in shown
    assert "[redacted]" in shown and "401" in str(caught.value)


def test_content_recording_off_keeps_bodies_out_of_spans(account, shop, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "RECORD_CONTENT": False}
    tool = make_tool(account, shop, name="refund", method="POST", url_template="/echo")

    custom_tool_call(tool, {"order_id": "1042"}, contact_identity=None)

    span = SpanRecord.objects.get(name="captain.http_tool")
    assert span.attributes["captain.http.status_code"] == 200
    assert span.attributes["captain.http.attempts"] == 1
    assert "captain.http.request_body" not in span.attributes
    assert "captain.http.response_body" not in span.attributes


# ---- runtime tools ---------------------------------------------------------------------------------------------


def test_playground_describes_a_change_and_sends_nothing(account, shop):
    make_tool(account, shop, name="refund", method="POST", url_template="/refunds/{{ order_id }}")
    make_tool(account, shop)
    refund, status = custom_tools_for(account.id, ["refund", "order_status"])

    said = refund.function(RunContext(account.id, None), {"order_id": "1042", "amount": 20})
    conversation = ConversationFactory(contact_inbox__inbox__account=account)
    dry = refund.function(RunContext(account.id, conversation.id, extra={"dry_run": True}), {"order_id": "9"})

    assert said == f"Playground: would send POST {shop.base}/refunds/1042 (nothing was sent)"
    assert "nothing was sent" in dry
    assert shop.requests == []
    status.function(RunContext(account.id, None), {"order_id": "5"})  # a GET only reads: it runs
    assert [r["path"] for r in shop.requests] == ["/orders/5"]


def test_tools_for_keep_order_skip_unknown_disabled_and_other_accounts(account, shop):
    make_tool(account, shop, name="a_tool")
    make_tool(account, shop, name="b_tool", enabled=False)
    make_tool(account, shop, name="c_tool")
    other = AccountFactory()
    make_tool(other, shop, name="theirs")

    tools = custom_tools_for(account.id, ["c_tool", "faq_lookup", "b_tool", "theirs", "a_tool", "c_tool"])

    assert [t.name for t in tools] == ["c_tool", "a_tool"]
    assert tools[0].parameters["additionalProperties"] is False


def test_changes_ask_for_confirmation_unless_safe(account, shop):
    make_tool(account, shop, name="refund", method="POST", url_template="/echo")
    make_tool(account, shop, name="note", method="POST", url_template="/echo", safe=True)
    make_tool(
        account,
        shop,
        name="cancel",
        method="DELETE",
        url_template="/orders/{{ order_id }}",
        confirmation_template="Cancel order {{ order_id }}?",
    )
    make_tool(account, shop)
    refund, note, cancel, status = custom_tools_for(account.id, ["refund", "note", "cancel", "order_status"])

    assert note.confirm is None and status.confirm is None
    assert cancel.confirm is not None and cancel.confirm({"order_id": "1042"}) == "Cancel order 1042?"
    assert refund.confirm is not None
    assert refund.confirm({"order_id": "1042", "amount": 20}) == (
        "Please confirm: Look up an order (order_id: 1042, amount: 20). Reply yes to go ahead or no to cancel."
    )


def test_a_failing_tool_is_a_tool_error_inside_a_run_and_the_run_goes_on(account, shop):
    """Through the real runner: the 500 reaches the model as the tool's error, the run answers, and the HTTP
    span is a child of the tool call's span."""
    from captain.runtime import Agent, Reply, Runner
    from tests.captain.runtime.test_runner import ScriptedModel, calls, reply

    make_tool(account, shop, url_template="/error500", parameters={"type": "object"})
    agent = Agent(
        key="orders",
        name="Orders",
        instructions="Help with orders.",
        model="scripted-model",
        tools=custom_tools_for(account.id, ["order_status"]),
    )
    model = ScriptedModel(calls(("order_status", {})), reply("Sorry, the shop is down; try later."))

    result = Runner(model).run(
        agents={"orders": agent},
        start_key="orders",
        messages=[{"role": "user", "content": "where is my order?"}],
        context=RunContext(account.id, None),
    )

    assert isinstance(result.outcome, Reply)
    tool_message = model.calls[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "the service answered HTTP 500" in tool_message["content"]
    http = SpanRecord.objects.get(name="captain.http_tool")
    parent = SpanRecord.objects.get(span_id=http.parent_span_id)
    assert parent.name == "captain.tool"
