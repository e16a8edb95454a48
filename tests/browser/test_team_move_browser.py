"""Moving a conversation to a team in a real browser: an agent picks "Billing" in the side panel's team picker,
the thread says who moved it, and the team's round-robin gives it to its online member (the side panel shows the
new assignee without a reload)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from helpdesk.models import Conversation, Membership, Team, TeamMember
from tests.factories import AccountFactory, ConversationFactory, InboxFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_agent_moves_a_conversation_to_a_team_that_assigns_it(browser, sign_in, live_server, redis_url):
    account = AccountFactory(name="Acme")
    inbox = InboxFactory(account=account, name="Web chat")
    bob, carol = UserFactory(username="bob"), UserFactory(username="carol")
    MembershipFactory(account=account, user=bob, role=Membership.Role.AGENT)
    MembershipFactory(account=account, user=carol, role=Membership.Role.AGENT)
    billing = Team.objects.create(account=account, name="Billing", auto_assign=True)
    TeamMember.objects.create(team=billing, user=carol)
    conversation = ConversationFactory(
        contact_inbox__inbox=inbox, status=Conversation.Status.OPEN, assignee=bob
    )
    page = browser.page
    sign_in(page, live_server.url, "bob", wait_for="**/lists/**")
    page.goto(f"{live_server.url}/app/accounts/{account.id}/conversations/{conversation.id}/")

    page.select_option("select[name=team]", str(billing.id))
    page.click("form:has(select[name=team]) button[type=submit]")

    expect(page.get_by_text("bob gave the conversation to the team Billing.")).to_be_visible()
    expect(page.get_by_text("Assigned to carol (Billing, round-robin).")).to_be_visible()
    browser.shot("moved")
    conversation.refresh_from_db()
    assert (conversation.team_id, conversation.assignee_id) == (billing.id, carol.id)
    assert browser.console_errors == []
