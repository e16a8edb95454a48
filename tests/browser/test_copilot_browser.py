"""The copilot in a real browser: an agent asks for a draft, the text arrives in the reply box with the knowledge
it was drafted from listed under it, the agent edits it and presses Send, and the edited text is the reply in
the thread. Nothing reaches the customer before Send.

The copilot task body runs in a thread of this process (`copilot_generate.apply`, as test_live_thoughts_browser
does for the playground): the web request queues the task in Redis exactly as in production, and the end-to-end
suite already proves a real worker takes such tasks. The model is the scripted server over real HTTP with the
real `openai` SDK. Whether the text arrives through the stream or through the status URL (the page reads it
once the stream ends either way) depends on the live server; the result in the box is the same.
"""

from __future__ import annotations

import threading
import time

import pytest
from playwright.sync_api import expect

from captain.answering.models import CreditLedgerEntry
from captain.copilot.models import CopilotRun
from captain.copilot.tasks import copilot_generate
from captain.knowledge.services.knowledge_search import knowledge_cache_clear
from helpdesk.models import Membership, Message, PersonSettings
from tests.captain.answering.knowledge_rows import document
from tests.factories import (
    AssistantInboxFactory,
    ConversationFactory,
    FaqEntryFactory,
    MembershipFactory,
    MessageFactory,
    UserFactory,
)
from tests.support import fake_llm_server as fake

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DRAFT = "Hi! Refunds reach your card within 5 business days after we receive the parcel [1]."
EDIT = " Thanks for your patience, Bob."


@pytest.fixture
def setup(redis_url, llm_settings, settings):
    from captain.answering.services import live

    settings.REDIS_URL = redis_url
    live._client.cache_clear()
    live._subscriber_client.cache_clear()
    knowledge_cache_clear()
    link = AssistantInboxFactory(assistant__name="Captain", inbox__name="Website chat")
    assistant = link.assistant
    document(
        assistant,
        "Returns policy",
        [("Refunds", "Refunds reach your card within 5 business days after we receive the parcel.")],
        url="https://shop.example/returns",
    )
    FaqEntryFactory(assistant=assistant)  # "How long does a refund take?"
    agent = UserFactory(username="bob", first_name="Bob")  # signed in with the factory's password
    MembershipFactory(account=assistant.account, user=agent, role=Membership.Role.AGENT)
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox, status="open")
    MessageFactory(conversation=conversation, content="How long does my refund take? I sent the shoes back.")
    yield {"account": assistant.account, "conversation": conversation}
    live._client.cache_clear()
    live._subscriber_client.cache_clear()
    knowledge_cache_clear()


def wait_for_queued_run(timeout: float = 10.0) -> CopilotRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = CopilotRun.objects.filter(status=CopilotRun.Status.QUEUED).first()
        if run is not None:
            return run
        time.sleep(0.05)
    raise AssertionError("the page did not start a copilot run")


def test_draft_edit_send(browser, sign_in, live_server, setup, llm_settings):
    llm_settings.push(
        fake.streamed(DRAFT, chunks=[DRAFT[:20], DRAFT[20:50], DRAFT[50:]], delay=0.05),
    )
    page = browser.page
    sign_in(page, live_server.url, "bob")
    account, conversation = setup["account"], setup["conversation"]
    page.goto(f"{live_server.url}/app/accounts/{account.id}/conversations/{conversation.id}/")
    panel = page.locator("#copilot")
    expect(panel).to_be_visible()
    browser.shot("copilot-panel")

    page.click("#copilot button[data-copilot-kind=draft]")
    expect(panel.locator("[data-copilot-status]")).to_contain_text("Drafting a reply")
    run = wait_for_queued_run()
    worker = threading.Thread(target=lambda: copilot_generate.apply(args=(run.pk,)), daemon=True)
    worker.start()
    worker.join(timeout=60)

    box = page.locator("textarea[name=content]")
    expect(box).to_have_value(DRAFT)
    expect(panel.locator("[data-copilot-status]")).to_contain_text("Draft ready")
    sources = panel.locator("[data-copilot-sources]")
    expect(sources).to_be_visible()
    link = sources.locator("a", has_text="Returns policy")
    expect(link).to_have_attribute("href", "https://shop.example/returns")
    browser.shot("copilot-draft")
    # The copilot only wrote into the box: nothing was sent or stored as a reply, and the draft was charged once.
    assert not Message.objects.filter(conversation=conversation, message_type="outgoing").exists()
    assert CreditLedgerEntry.objects.filter(copilot_run=run, kind="copilot").count() == 1
    (request,) = llm_settings.requests
    assert "Refunds reach your card within 5 business days" in request["messages"][-1]["content"]

    box.click()
    page.keyboard.press("End")
    page.keyboard.type(EDIT)
    expect(box).to_have_value(DRAFT + EDIT)
    page.click("#composer button[type=submit]")

    reply = page.locator("#thread .msg.human").last
    expect(reply).to_contain_text(DRAFT + EDIT)
    browser.shot("copilot-sent")
    sent = Message.objects.get(conversation=conversation, message_type="outgoing")
    assert (sent.content, sent.private, sent.sender_type) == (DRAFT + EDIT, False, Message.SenderType.USER)
    assert browser.console_errors == []


def test_a_chinese_agent_reads_the_copilots_status_lines_in_chinese(browser, sign_in, live_server, setup):
    PersonSettings.objects.create(user=Membership.objects.get(user__username="bob").user, language="zh-hans")
    page = browser.page
    sign_in(page, live_server.url, "bob")
    account, conversation = setup["account"], setup["conversation"]
    page.goto(f"{live_server.url}/app/accounts/{account.id}/conversations/{conversation.id}/")
    status = page.locator("#copilot [data-copilot-status]")
    page.click("#copilot button[data-copilot-kind=rephrase]")  # the reply box is empty: refused at once
    expect(status).to_have_text("请先在回复框中输入文字；副驾驶会改写您写的内容。")
    page.click("#copilot button[data-copilot-kind=draft]")
    expect(status).to_have_text("正在草拟回复…")
    wait_for_queued_run()
    assert browser.console_errors == []
