"""Thoughts stream live to the playground: a planning specialist's `think` note appears on the page while the
turn is still running (server-sent events through the real Redis), marked internal, and the page reloads to the
answer when the turn ends. The turn runs the real task body in a thread of this process (as in
test_dashboard_browser.py), with the scripted model holding its last answer until the test has looked.

The pages come from the real web server (gunicorn + uvicorn worker, tests.support.servers.start_web_server):
the live views are async and stream only under ASGI (a WSGI server would buffer them whole)."""

from __future__ import annotations

import threading

import pytest
from playwright.sync_api import expect

from captain.assistants.models import ScenarioMode
from captain.playground.models import PlaygroundRun
from captain.playground.tasks import playground_turn
from helpdesk.models import Membership
from tests.factories import AssistantFactory, MembershipFactory, ScenarioFactory, UserFactory
from tests.support import fake_llm_server as fake
from tests.support.servers import start_test_web_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pass-word-123"
THOUGHT = "Order 1042 was delivered on Monday, so no refund is due yet."


@pytest.fixture
def setup(redis_url, llm_settings, settings, tmp_path):
    from captain.answering.services import live

    settings.REDIS_URL = redis_url
    live._client.cache_clear()
    live._subscriber_client.cache_clear()
    assistant = AssistantFactory(name="Captain")
    ScenarioFactory(
        assistant=assistant,
        title="Orders",
        key="orders",
        description="Order questions",
        mode=ScenarioMode.PLANNING,
    )
    admin = UserFactory(username="alice", first_name="Alice")  # password: PASSWORD (the factory's)
    MembershipFactory(account=assistant.account, user=admin, role=Membership.Role.ADMIN)
    server = start_test_web_server(redis_url=redis_url, tmp_path=tmp_path)
    try:
        yield {"assistant": assistant, "account": assistant.account, "server": server}
    finally:
        server.stop()
    live._client.cache_clear()
    live._subscriber_client.cache_clear()


def test_thoughts_stream_live_to_the_playground(browser, sign_in, setup, llm_settings):
    live_server = setup["server"]
    looked = threading.Event()
    steps = iter(
        [
            fake.tool_call("update_plan", {"steps": ["Check order 1042", "Answer"], "next": "check"}),
            fake.tool_call("think", {"thought": THOUGHT}),
            fake.tool_call("update_plan", {"done": [1], "next": "answer"}),
        ]
    )

    def model(request: dict) -> fake.Step:
        step = next(steps, None)
        if step is not None:
            return step
        looked.wait(timeout=4)  # hold the answer until the test has seen the thought live
        return fake.tool_call("final_answer", {"answer": "Your order 1042 arrived on Monday."})

    llm_settings.set_responder(model)
    page = browser.page
    sign_in(page, live_server.url, "alice")
    page.goto(f"{live_server.url}/app/accounts/{setup['account'].id}/playground/?start=orders")
    page.fill("textarea[name=message]", "Can I get a refund for order 1042?")
    page.click("button[name=send]")
    panel = page.locator("#live-panel")
    expect(panel).to_be_visible()
    expect(panel).to_contain_text("never shown to the customer")

    (run,) = PlaygroundRun.objects.filter(status=PlaygroundRun.Status.QUEUED)
    worker = threading.Thread(target=lambda: playground_turn.apply(args=(run.pk,)), daemon=True)
    worker.start()
    try:
        expect(panel.locator(".thought-text")).to_contain_text(THOUGHT)
        expect(panel.locator("[data-live-plan]")).to_contain_text("Check order 1042")
        browser.shot("playground-live-thought")
    finally:
        looked.set()
        worker.join(timeout=30)
    # The end of the turn reloads the page: the answer is there, and the thought is in its debug log.
    ai = page.locator(".msg.ai").last
    expect(ai).to_contain_text("Your order 1042 arrived on Monday.")
    expect(page.locator("#debug-log")).to_contain_text(THOUGHT)
    expect(page.locator("#live-panel")).to_have_count(0)
    browser.shot("playground-after-turn")
    assert browser.console_errors == []
