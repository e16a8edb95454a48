"""Learning from corrections in a real browser: the router (a builder's rule written too broadly; the scripted
model server over HTTP answers) sends a customer's message to the wrong specialist through the real run service; a person says
"This should have gone to Shipping" on the conversation page, and an administrator accepts the correction on
the review page, after which the router compares messages with it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from captain.answering.models import ReplyJob
from captain.answering.services.runs import run_for_message
from captain.routing.models import RoutingExample
from captain.routing.services.routing import GraphSpec, routing_replace
from captain.routing.services.routing_examples import examples_in_use
from helpdesk.models import Conversation, Membership
from tests.factories import (
    AssistantInboxFactory,
    ConversationFactory,
    MembershipFactory,
    MessageFactory,
    ScenarioFactory,
    UserFactory,
)
from tests.support import fake_llm_server as fake

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def misrouted(redis_url, llm_settings):
    link = AssistantInboxFactory(assistant__name="Captain", inbox__name="Website chat")
    assistant = link.assistant
    ScenarioFactory(assistant=assistant, key="refunds", title="Refunds", description="Refund requests")
    ScenarioFactory(assistant=assistant, key="shipping", title="Shipping", description="Parcels and delivery")
    # Meant for "a refund for my damaged parcel", the rule also catches a plain question about a parcel.
    too_broad = {"node": "assistant", "match": "contains", "value": "parcel", "target": "refunds"}
    routing_replace(assistant=assistant, spec=GraphSpec(rules=[too_broad]))
    user = UserFactory(username="alice")
    MembershipFactory(account=assistant.account, user=user, role=Membership.Role.ADMIN)
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox, status="pending")
    message = MessageFactory(
        conversation=conversation, content="Where is my parcel?", reply_job=ReplyJob.Status.PENDING
    )
    llm_settings.push(fake.text("I can help with your refund."))
    assert run_for_message(message_id=message.id) == "reply"
    conversation.refresh_from_db()
    assert conversation.ai_agent_key == "refunds"
    return assistant, conversation


def test_a_person_reroutes_and_an_admin_accepts_the_correction(browser, sign_in, live_server, misrouted):
    assistant, conversation = misrouted
    page = browser.page
    sign_in(page, live_server.url, "alice")

    page.goto(f"{live_server.url}/app/accounts/{assistant.account_id}/conversations/{conversation.id}/")
    form = page.locator("#reroute-form")
    expect(form).to_contain_text("The AI took “Where is my parcel?” as: Refunds.")
    expect(form).not_to_contain_text("Triage")  # plain words for agents, not the router's
    form.locator("select[name=key]").select_option("shipping")
    browser.shot("reroute")
    form.locator("button[data-action='reroute']").click()
    expect(page.locator(".flash")).to_contain_text("The AI continues at Shipping")
    expect(page.locator("#reroute-form select[name=key]")).to_have_value("shipping")
    assert Conversation.objects.get(pk=conversation.pk).ai_agent_key == "shipping"

    page.click("nav.admin-links >> text=Routing corrections")
    expect(page).to_have_url(f"{live_server.url}/app/accounts/{assistant.account_id}/routing-corrections/")
    example = RoutingExample.objects.get()
    row = page.locator(f"tr[data-example='{example.pk}']")
    expect(row).to_contain_text("Where is my parcel?")
    expect(row.locator("td.routed-to")).to_have_text("Refunds")
    expect(row).to_contain_text("Re-routed by a person")
    browser.shot("review")
    row.locator("button[data-action='accept']").click()
    expect(page.locator("#corrections-empty")).to_be_visible()
    browser.shot("accepted")

    example.refresh_from_db()
    assert (example.key, example.status) == ("shipping", "accepted")
    assert examples_in_use(assistant)["shipping"] == ["Where is my parcel?"]
    assert browser.console_errors == []
