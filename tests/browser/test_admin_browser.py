"""The assistant's admin page in a real browser: short (folded settings and inlines), its builder links lead to
the filtered pages, the routing picture is drawn, the playground link opens the playground with the assistant,
and nothing violates the content security policy.

The page height is printed (document.body.scrollHeight at 1360 px wide) for the report; the bound asserted is
loose on purpose (fonts differ between machines), but the 9,000-pixel page of before would fail it.
"""

from __future__ import annotations

import pytest

from captain.knowledge.models import FaqEntry
from captain.memory.models import MemoryVariable
from captain.routing.services.routing import GraphSpec, routing_replace
from helpdesk.models import Membership, Team
from tests.factories import AccountFactory, AssistantFactory, MembershipFactory, ScenarioFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pass-word-123"
SHORT_PAGE = 3500
"""Pixels. The same data on the page before the folding measured about 9,000 (see the report)."""


def seed_builder_team(account) -> object:
    """A realistic assistant: 4 scenarios with real instructions, 12 FAQ entries, 3 memory variables and a routing
    graph with node settings: what a builder's page holds after a week."""
    assistant = AssistantFactory(
        account=account,
        name="Captain",
        instructions="You are the support assistant of Example Shop. " * 8,
        response_guidelines=["Answer in the customer's language.", "Keep it short.", "Offer a person."],
        guardrails=["Never promise refunds.", "Never share other customers' data."],
    )
    billing = Team.objects.create(account=account, name="Billing")
    for key, title in [
        ("refunds", "Refunds"),
        ("shipping", "Shipping"),
        ("orders", "Orders"),
        ("accounts", "Account help"),
    ]:
        ScenarioFactory(
            assistant=assistant,
            key=key,
            title=title,
            description=f"The customer asks about {title.lower()}.",
            instruction=f"Handle {title.lower()} step by step. " * 20,
            handoff_team=billing if key == "refunds" else None,
        )
    for i in range(12):
        FaqEntry.objects.create(
            account=account,
            assistant=assistant,
            question=f"Question number {i} about delivery times?",
            answer="Orders ship within two working days. " * 3,
        )
    for name in ("order_number", "plan", "language"):
        MemoryVariable.objects.create(assistant=assistant, name=name, description=f"The customer's {name}")
    routing_replace(
        assistant=assistant,
        spec=GraphSpec(
            config={"default_mode": "semantic"},
            nodes=[
                {"key": "refunds", "mode": "router", "examples": ["I want my money back", "refund please"]},
                {"key": "shipping", "examples": ["where is my parcel"]},
                {"key": "accounts", "is_global": True},
            ],
            edges=[("refunds", "shipping")],
        ),
    )
    return assistant


def admin_login(page, base_url: str, username: str) -> None:
    page.goto(f"{base_url}/admin/login/")  # sends to the dashboard's sign-in, which comes back to the admin
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/admin/")


def test_the_assistant_page_is_short_and_leads_to_every_builder_page(browser, live_server):
    user = UserFactory(username="builder", is_staff=True)
    user.set_password(PASSWORD)
    user.save()
    account = AccountFactory(name="Example Shop")
    MembershipFactory(account=account, user=user, role=Membership.Role.ADMIN)
    assistant = seed_builder_team(account)

    page = browser.page
    admin_login(page, live_server.url, "builder")
    # The index names the builder's pages.
    for name in ("Scenarios", "Routing nodes", "Routing edges", "Routing rules", "FAQ entries", "Teams"):
        assert page.locator(f"#content-main a:text-is('{name}')").count() == 1, name

    page.goto(f"{live_server.url}/admin/captain/assistant/{assistant.pk}/change/")
    height = page.evaluate("document.body.scrollHeight")
    print(f"\nassistant change page: document.body.scrollHeight = {height}px (1360 px wide)")
    browser.shot("assistant-folded")
    assert height < SHORT_PAGE

    # The routing picture: triage, four scenarios and people; the global node is dashed.
    svg = page.locator("svg.routing-graph")
    assert svg.is_visible()
    assert svg.locator("g.node").count() == 6
    assert svg.locator("g.node[data-node='accounts'] rect").get_attribute("stroke-dasharray") == "6 4"
    assert svg.locator("g.node[data-node='refunds']").get_attribute("data-team") == "Billing"
    assert svg.locator("path.edge[data-edge='refunds->shipping']").count() == 1

    # Unfolding one section makes the page longer: the folded parts are really there.
    page.locator("summary:has-text('Scenarios')").first.click()
    assert page.evaluate("document.body.scrollHeight") > height
    unfolded = page.evaluate(
        "(() => { document.querySelectorAll('details').forEach(d => d.open = true);"
        " return document.body.scrollHeight; })()"
    )
    print(f"assistant change page, every section unfolded: {unfolded}px")

    page.goto(f"{live_server.url}/admin/captain/assistant/{assistant.pk}/change/")
    page.click("a[data-page='scenario']")
    page.wait_for_url("**/admin/captain/scenario/?assistant__id__exact=*")
    assert page.locator("#result_list tbody tr").count() == 4

    page.goto(f"{live_server.url}/admin/captain/assistant/{assistant.pk}/change/")
    page.click("a.playground-link")
    page.wait_for_url(f"**/app/accounts/{account.pk}/playground/?assistant={assistant.pk}")
    assert "Captain" in page.content()

    # CSP violations are console errors (the missing /favicon.ico of the live server is not ours).
    errors = [e for e in browser.console_errors if "404 (Not Found)" not in e]
    assert errors == [], errors
