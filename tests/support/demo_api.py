"""The product's REST API as a client meets it: the real web server (gunicorn + uvicorn on config.asgi, the command
`scripts/run` starts) on its own SQLite database with the demo account, seeded by the same management commands
`scripts/run` runs, and a conversation a customer started through the signed webhook.

The database is a file of its own, not the test database: tests that use this (tests/api_contract/) let a fuzzer
write thousands of rows through the API, which must neither leak into other tests nor be flushed under the
server's feet by pytest-django between tests. SQLite on purpose, in both passes of `scripts/test`: it is the
embedded default, and its integers are where oversized ids turned into server errors.

No Celery worker runs: the API answers without one (work it enqueues waits in this server's own redis-server,
which nothing else reads), and no model is called. The server process may reach the loopback interface only
(tests/support/loopback_only), and the outbound policy allowlists nothing, so a URL a fuzzer writes into a custom
tool or a model endpoint is refused or unreachable, never fetched.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from helpdesk.channels.api_channel import signed_headers
from tests.support.servers import ROOT, RedisServer, WebServer, start_redis, start_web_server

LOOPBACK_ONLY = ROOT / "tests" / "support" / "loopback_only"
# The demo's published credentials (captain/management/commands/captain_demo_seed.py).
DEMO_WEBHOOK_TOKEN = "demo-api-inbox"
DEMO_INBOX_SECRET = "demo-inbox-secret"
# Nothing listens on the discard port: a model call, should an operation make one, fails at once.
UNREACHABLE_MODEL_URL = "http://127.0.0.1:9/v1"


@dataclass
class DemoApi:
    """A running server with the demo account, and what a client needs to call it."""

    web: WebServer
    redis: RedisServer
    workdir: Path
    account_id: int
    assistant_id: int
    conversation_id: int
    tokens: dict[str, str]
    """API token per demo user: "admin" (account administrator) and "agent"."""
    keep: dict[str, int | str] = field(default_factory=dict)
    """A live object for each path parameter (`canned_id`, `tool_id`, `name`...), made by `seed_objects`."""
    spare: dict[str, int | str] = field(default_factory=dict)
    """A second object of each kind that has a DELETE operation, for that operation to delete."""
    notifications: dict[str, int] = field(default_factory=dict)
    """A notification of each demo user (role -> id): each sees only their own."""

    @property
    def url(self) -> str:
        return self.web.url

    @property
    def schema_url(self) -> str:
        return f"{self.web.url}/api/schema/"

    def headers(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Token {self.tokens[role]}"}

    def stop(self) -> None:
        self.web.stop()
        self.redis.stop()


def _manage(*args: str, env: dict[str, str]) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=180,
    )
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def customer_writes(url: str, text: str, *, contact: str | None = None) -> int:
    """A customer message through the demo inbox's signed webhook, as a website integration sends it; returns
    the conversation's id from the acknowledgement."""
    contact = contact or f"api-contract-{uuid.uuid4().hex[:8]}"
    body = json.dumps(
        {"message_id": uuid.uuid4().hex, "contact": {"id": contact, "name": "Test Customer"}, "text": text}
    ).encode()
    response = httpx.post(
        f"{url}/webhooks/api/{DEMO_WEBHOOK_TOKEN}/",
        content=body,
        headers={"Content-Type": "application/json", **signed_headers(DEMO_INBOX_SECRET, body)},
        timeout=30,
    )
    response.raise_for_status()
    return int(response.json()["conversation_id"])


def start_demo_api(workdir: Path, *, workers: int = 2) -> DemoApi:
    """Migrate a new SQLite database in `workdir`, seed the demo account and start the server on it with
    `workers` worker processes (2, as `scripts/run` starts it)."""
    redis = start_redis()
    env = {
        "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
        "REDIS_URL": redis.url,
        "HELPDESK_VAR_DIR": str(workdir / "var"),
        # The test run allowlists 127.0.0.1 for its fake providers (tests/conftest.py); this server gets no
        # exception at all, so nothing a fuzzer configures can reach a service on this machine either.
        "HELPDESK_OUTBOUND_ALLOWED_HOSTS": "",
        # One token sends thousands of requests in a few minutes: the per-token limits (1,200/min, 60/min for
        # anonymous requests) would turn most answers into 429s, which tells nothing about the operation.
        "HELPDESK_API_RATE_USER": "1000000/min",
        "HELPDESK_API_RATE_ANON": "1000000/min",
        "OPENAI_BASE_URL": UNREACHABLE_MODEL_URL,
        "OPENAI_API_KEY": "unused",
        "PYTHONPATH": str(LOOPBACK_ONLY),
    }
    try:
        _manage("migrate", "--noinput", "-v0", env=env)
        # DEBUG is off in the test run, as in production; --force is the seed's switch for that case.
        seeded = _manage("captain_demo_seed", "--force", env=env)
        account = re.search(r"Demo account #(\d+)", seeded)
        tokens = dict(re.findall(r"\b(admin|agent)=([0-9a-f]{40})\b", seeded))
        assert account is not None and set(tokens) == {"admin", "agent"}, seeded
        web = start_web_server(env=env, log_path=workdir / "web.log", workers=workers)
    except BaseException:
        redis.stop()
        raise
    try:
        account_id = int(account.group(1))
        assistants = httpx.get(
            f"{web.url}/api/v1/captain/accounts/{account_id}/assistants/",
            headers={"Authorization": f"Token {tokens['admin']}"},
            timeout=30,
        )
        assistants.raise_for_status()
        body = assistants.json()
        rows = body["results"] if isinstance(body, dict) else body
        conversation_id = customer_writes(web.url, "Where is my parcel? Order 1042 has not arrived.")
        customer_writes(web.url, "Can I return an item I bought last week?")
    except BaseException:
        web.stop()
        redis.stop()
        raise
    return DemoApi(
        web=web,
        redis=redis,
        workdir=workdir,
        account_id=account_id,
        assistant_id=int(rows[0]["id"]),
        conversation_id=conversation_id,
        tokens=tokens,
    )


# A public address the outbound policy accepts for a custom tool or a model endpoint; never connected to: the
# server process is loopback-only (tests/support/loopback_only), so a test call fails as an unreachable host does.
UNREACHABLE_PUBLIC_URL = "https://93.184.215.14"


def seed_objects(api: DemoApi) -> None:
    """Objects of each kind the API manages, made through the API as the demo administrator, so that operations on
    `.../<id>/` reach their logic instead of answering 404: `api.keep` (the one to read and change), `api.spare`
    (the one a DELETE operation gets) and `api.notifications`.

    Three of each kind, in the order spare, filler, keeper: a fuzzer's boundary values for an id are 1 and 2, so
    the object the other operations need is never the one a DELETE with a made-up id removes. The keeper assistant
    is a new one for the same reason (the demo's is #1); the conversation's assistant stays the demo's, which
    serves the inbox, so conversation memory needs its variable declared there too."""
    base = f"{api.url}/api/v1/accounts/{api.account_id}"
    captain = f"{api.url}/api/v1/captain/accounts/{api.account_id}"

    def call(role: str, method: str, url: str, **kwargs: Any) -> Any:
        response = httpx.request(method, url, headers=api.headers(role), timeout=30, **kwargs)
        assert response.is_success, f"{method} {url}: {response.status_code} {response.text[:500]}"
        return response.json()

    def three(param: str, url: str, make: Callable[[str], dict[str, Any]]) -> None:
        """Spare, filler and keeper of one kind; `make(name)` is the JSON body for an object called `name`."""
        spare, _, keep = (
            call("admin", "POST", url, json=make(name))["id"] for name in ("spare", "filler", "keep")
        )
        api.spare[param], api.keep[param] = spare, keep

    three("assistant_id", f"{captain}/assistants/", lambda name: {"name": f"Assistant {name}"})
    demo_assistant = f"{captain}/assistants/{api.assistant_id}"
    api.assistant_id = int(api.keep["assistant_id"])
    assistant = f"{captain}/assistants/{api.assistant_id}"
    three(
        "scenario_id",
        f"{assistant}/scenarios/",
        lambda name: {
            "title": f"Orders {name}",
            "description": "Questions about an order.",
            "instruction": "Be brief.",
        },
    )
    three(
        "faq_entry_id",
        f"{assistant}/faq/",
        lambda name: {"question": f"Opening hours ({name})?", "answer": "9-17."},
    )
    three(
        "shortcut_id",
        f"{assistant}/shortcuts/",
        lambda name: {
            "command": f"hours_{name}",
            "description": "Opening hours",
            "action": "message",
            "message_template": "We open at 9:00 and answer within a working day.",
        },
    )
    three(
        "variable_id",
        f"{assistant}/memory-variables/",
        lambda name: {"name": f"order_{name}", "description": "The customer's order number"},
    )
    call(
        "admin",
        "POST",
        f"{demo_assistant}/memory-variables/",
        json={"name": "order_number", "description": "The customer's order number"},
    )
    api.keep["name"] = "order_number"
    three(
        "canned_id",
        f"{base}/canned-responses/",
        lambda name: {"short_code": f"refunds-{name}", "content": "Refunds take 5 business days."},
    )
    three(
        "definition_id",
        f"{base}/attribute-definitions/",
        lambda name: {"applies_to": "contact", "key": f"plan_{name}", "label": "Plan"},
    )
    three(
        "tool_id",
        f"{captain}/custom-tools/",
        lambda name: {
            "name": f"order_status_{name}",
            "description": "Look up an order's status",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
            "url_template": UNREACHABLE_PUBLIC_URL + "/orders/{{ order_id }}",
        },
    )
    three(
        "endpoint_id",
        f"{captain}/model-endpoints/",
        lambda name: {"name": f"endpoint-{name}", "base_url": UNREACHABLE_PUBLIC_URL + "/v1"},
    )
    spare, _, keep = (
        call(
            "admin",
            "POST",
            f"{assistant}/documents/",
            files={
                "file": (f"{name}.txt", f"{name}: returns are free within 30 days.".encode(), "text/plain")
            },
        )["id"]
        for name in ("spare", "filler", "keep")
    )
    api.spare["document_id"], api.keep["document_id"] = spare, keep
    # Teams, contacts and conversations have no DELETE operation: one will do.
    api.keep["team_id"] = call("admin", "POST", f"{base}/teams/", json={"name": "Billing"})["id"]
    conversation = call("admin", "GET", f"{base}/conversations/{api.conversation_id}/")
    api.keep["contact_id"] = conversation["contact"]["id"]
    # Each demo user mentions the other in a private note: a notification for each.
    for author, other in (("admin", "agent"), ("agent", "admin")):
        call(
            author,
            "POST",
            f"{base}/conversations/{api.conversation_id}/messages/",
            json={"content": f"@{other} could you look at this one?", "private": True},
        )
    for role in ("admin", "agent"):
        body = call(role, "GET", f"{base}/notifications/")
        rows = body["results"] if isinstance(body, dict) else body
        api.notifications[role] = int(rows[0]["id"])
