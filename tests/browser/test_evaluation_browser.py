"""Test before launch in a real browser: an admin creates a question set, uploads a JSONL file, runs it, sees
each answer with its verdict, marks one right and one wrong, changes the assistant's configuration, runs the set
again and compares the two runs side by side.

The web request queues the run's task in Redis as in production; its body then runs in this process with
`eval_run.apply(...)` (as the knowledge browser test does), and the run page's own refresh brings the answers.
The model is the scripted OpenAI-compatible server: the run goes through the production team over real HTTP.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from captain.answering.models import CreditLedgerEntry
from captain.evaluation.models import EvalRun
from captain.evaluation.tasks import eval_run
from helpdesk.models import Conversation, Membership
from tests.factories import AssistantFactory, MembershipFactory, UserFactory
from tests.support import fake_llm_server as fake

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pass-word-123"
QUESTIONS = [
    {"question": "Can I rent a city bike?", "expected": "Yes, at the front desk"},
    {"question": "I want to talk to a person", "previous": [{"role": "user", "content": "Hello"}]},
]


def scripted(request: dict) -> fake.Step:
    if "person" in fake.last_user_message(request) and "handoff_to_human" in fake.offered_tools(request):
        return fake.tool_call("handoff_to_human", {"reason": "the customer asked for a person"})
    return fake.text("You can rent a city bike at our front desk.")


@pytest.fixture
def model(settings):
    with fake.FakeLLMServer(responder=scripted) as server:
        settings.CAPTAIN = {
            **settings.CAPTAIN,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "test",
            "LLM_TIMEOUT_SECONDS": 5.0,
            "LLM_MAX_RETRIES": 0,
        }
        yield server
    from captain.assistants.services import model_endpoints

    model_endpoints.operator_clients_clear()


def run_and_wait(page, browser, label: str) -> EvalRun:
    page.fill("#run-form input[name=label]", label)
    page.click("#run-form button[value=run]")
    expect(page.locator("#run-title")).to_have_attribute("data-status", "queued")
    run = EvalRun.objects.get(label=label)
    assert eval_run.apply((run.pk,)).get() == "done"
    expect(page.locator("#run-title")).to_have_attribute("data-status", "done", timeout=10_000)  # it reloaded
    return run


def test_admin_uploads_runs_marks_and_compares(browser, sign_in, live_server, redis_url, model, tmp_path):
    assistant = AssistantFactory(name="Rental desk")
    admin = UserFactory(username="alice")
    admin.set_password(PASSWORD)
    admin.save()
    MembershipFactory(account=assistant.account, user=admin, role=Membership.Role.ADMIN)
    file = tmp_path / "launch.jsonl"
    file.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    page = browser.page

    sign_in(page, live_server.url, "alice")
    page.click("nav.admin-links >> text=Test before launch")
    expect(page.locator("h1")).to_have_text("Test before launch")
    page.fill("#new-set-form input[name=name]", "Launch check")
    page.click("#new-set-form button")
    expect(page.locator("h1")).to_have_text("Launch check")
    page.set_input_files("#upload-form input[type=file]", str(file))
    page.click("#upload-form button[value=upload]")
    expect(page.locator(".flash")).to_contain_text("2 questions imported from launch.jsonl")
    expect(page.locator("#questions tr[data-question]")).to_have_count(2)
    browser.shot("set")

    first = run_and_wait(page, browser, "before")
    answers = page.locator("#answers tr[data-answer]")
    expect(answers).to_have_count(2)
    expect(answers.nth(0)).to_have_attribute("data-verdict", "verified")
    expect(answers.nth(0)).to_contain_text("You can rent a city bike at our front desk.")
    expect(answers.nth(1)).to_have_attribute("data-verdict", "refused")
    expect(page.locator("[data-total=verified]")).to_have_text("1")
    expect(page.locator("[data-total=refused]")).to_have_text("1")
    answers.nth(0).locator("button[value=right]").click()
    expect(answers.nth(0)).to_have_attribute("data-mark", "right")
    answers.nth(1).locator("button[value=wrong]").click()
    expect(answers.nth(1)).to_have_attribute("data-mark", "wrong")
    expect(page.locator("[data-total=right]")).to_have_text("1")
    expect(page.locator("[data-total=wrong]")).to_have_text("1")
    browser.shot("marked")

    # A new configuration: what the customer reads at a handoff changes.
    assistant.handoff_message = "A colleague from the rental desk will answer you shortly."
    assistant.save()
    page.click("text=Launch check")
    second = run_and_wait(page, browser, "after")
    assert second.config_hash != first.config_hash

    page.select_option("#compare-form select[name=left]", str(first.pk))
    page.click("#compare-form button")
    expect(page.locator("h1")).to_contain_text("Compare")
    rows = page.locator("#compare tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_have_attribute("data-changes", "mark")
    expect(rows.nth(1)).to_have_attribute("data-changes", "answer mark")
    expect(rows.nth(1).locator("td.right")).to_contain_text("A colleague from the rental desk")
    expect(rows.nth(1).locator("td.left")).to_contain_text("A teammate will take it")
    expect(page.locator("#compare-summary")).to_contain_text("2 of 2 questions changed")
    browser.shot("compare")
    # A phone: the rows stack and nothing of the page's own content runs off the side (the shared header's
    # navigation is the frame's business).
    page.set_viewport_size({"width": 390, "height": 844})
    wide = page.evaluate(
        "[...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)"
        ".slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))"
    )
    browser.shot("compare-phone")
    assert not wide, wide
    browser.shot("compare-phone")

    assert not CreditLedgerEntry.objects.exists() and not Conversation.objects.exists()
    assert browser.console_errors == [] and browser.dialogs == []
