"""A builder's template cannot stall the web tier: on the real web server (gunicorn + uvicorn, one worker, as
`scripts/run` starts it), an account admin who keeps saving the payloads that used to hang a save request (a `**`
chain in a custom tool's URL, response and confirmation templates, widths of 50,000,000, the same in the
assistant's instructions) gets each refused in under a second, and a bystander's sign-in page answers in under a
second all the while. The in-process API tests (tests/captain/prompts/test_template_exhaustion.py) show the
refusal; only a real server shows that nobody else waits."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from rest_framework.authtoken.models import Token

from helpdesk.models import Membership
from tests.factories import AssistantFactory, MembershipFactory
from tests.support.database import database_url_for_subprocess
from tests.support.servers import WebServer, start_web_server

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

POWER_CHAIN = "{{ (9**100**100**100**100) % 7 }}"
WIDE = ["{{ 'x'|center(50000000) }}", "{{ '%50000000d'|format(1) }}", "{{ 'x'|indent(50000000) }}"]
ATTACK_SECONDS = 3.0
TOOL_HOST = "127.0.0.1"


@pytest.fixture
def web(redis_url, tmp_path) -> Iterator[WebServer]:
    # The tool's host is an address the policy allowlists, so saving it asks no DNS server: a lookup leaves this
    # machine (tests reach only 127.0.0.1), and a lost resolver packet once made one save wait glibc's 5 s retry.
    server = start_web_server(
        env={
            "DATABASE_URL": database_url_for_subprocess(),
            "REDIS_URL": redis_url,
            "HELPDESK_OUTBOUND_ALLOWED_HOSTS": f"{TOOL_HOST}:443",
        },
        log_path=tmp_path / "web.log",
    )
    yield server
    server.stop()


def attacks(account_id: int, assistant_id: int) -> list[tuple[str, str, dict]]:
    """(method, path, JSON body) of every save that carried a payload."""
    tools = f"/api/v1/captain/accounts/{account_id}/custom-tools/"
    tool = {
        "name": "order_status",
        "description": "Look up an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        "url_template": f"https://{TOOL_HOST}/orders/{{{{ order_id }}}}",
    }
    saves: list[tuple[str, str, dict]] = []
    for payload in [POWER_CHAIN, *WIDE]:
        saves.append(("POST", tools, {**tool, "url_template": f"https://{TOOL_HOST}/" + payload}))
        saves.append(("POST", tools, {**tool, "response_template": payload}))
        saves.append(("POST", tools, {**tool, "confirmation_template": payload}))
        saves.append(
            (
                "PATCH",
                f"/api/v1/captain/accounts/{account_id}/assistants/{assistant_id}/",
                {"instructions": f"Be kind. {payload}"},
            )
        )
    return saves


def test_an_admin_saving_exhausting_templates_is_refused_fast_and_a_bystander_never_waits(web):
    admin = MembershipFactory(role=Membership.Role.ADMIN)
    assistant = AssistantFactory(account=admin.account)
    token = Token.objects.create(user=admin.user).key
    saves = attacks(admin.account_id, assistant.pk)
    answers: list[tuple[int, float]] = []
    bystander: list[float] = []
    stop = threading.Event()

    def attack() -> None:
        headers = {"Authorization": f"Token {token}"}
        with httpx.Client(base_url=web.url, headers=headers, timeout=10) as client:
            deadline = time.monotonic() + ATTACK_SECONDS
            while time.monotonic() < deadline:
                for method, path, body in saves:
                    started = time.monotonic()
                    try:
                        status = client.request(method, path, json=body).status_code
                    except httpx.TimeoutException:
                        status = 0
                    answers.append((status, time.monotonic() - started))
        stop.set()

    attacker = threading.Thread(target=attack)
    attacker.start()
    with httpx.Client(base_url=web.url, timeout=10) as client:
        while not stop.wait(0.05):
            started = time.monotonic()
            with contextlib.suppress(httpx.TimeoutException):
                client.get("/auth/login/").raise_for_status()
            bystander.append(time.monotonic() - started)
    attacker.join()

    assert answers and bystander
    assert {status for status, _ in answers} == {400}, web.log()[-2000:]
    slowest = max(range(len(answers)), key=lambda i: answers[i][1])
    method, path, body = saves[slowest % len(saves)]
    assert answers[slowest][1] < 1.0, f"slowest save: {answers[slowest][1]:.2f} s, {method} {path} {body}"
    assert max(bystander) < 1.0, f"slowest sign-in page: {max(bystander):.2f} s"
    assert len(bystander) >= 10  # the page was asked for all through the attack
    # The same tool without a payload saves: the refusals above were the templates', not the URL's.
    headers = {"Authorization": f"Token {token}"}
    method, path, body = saves[1]
    clean = {key: value for key, value in body.items() if key != "response_template"}
    saved = httpx.post(web.url + path, json=clean, headers=headers, timeout=10)
    assert saved.status_code == 201, saved.text
