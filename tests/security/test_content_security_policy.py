"""Content-Security-Policy (django-csp): every page says scripts and styles come from this origin only, our
templates hold no inline code, Swagger UI's inline blocks carry the request's nonce, and in a real browser the
dashboard, the captain pages, the admin and the API docs work under the policy without a single violation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from helpdesk.models import Membership
from tests.browser.conftest import browser  # noqa: F401  (the chromium fixture, for the browser test below)
from tests.factories import AssistantInboxFactory, ConversationFactory, MembershipFactory, UserFactory

# The project's templates and any the apps bring.
TEMPLATE_DIRS = [
    Path(settings.BASE_DIR) / d for d in ("templates", "helpdesk/templates", "captain/templates")
]
PASSWORD = "pass-word-123"


def policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {d.split()[0]: d.split()[1:] for d in header.split(";") if d.strip()}


@pytest.fixture
def team(db):
    link = AssistantInboxFactory()
    account = link.assistant.account
    admin = UserFactory(username="alice", is_staff=True, is_superuser=True)
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    return {"account": account, "admin": admin, "conversation": conversation, "assistant": link.assistant}


def dashboard_urls(team) -> list[str]:
    a, c = team["account"].id, team["conversation"].id
    return [
        f"/app/accounts/{a}/lists/needs-people/",
        f"/app/accounts/{a}/conversations/{c}/",
        f"/app/accounts/{a}/conversations/{c}/runs/",
        f"/app/accounts/{a}/playground/",
        f"/app/accounts/{a}/usage/",
    ]


ADMIN_URLS = [
    "/admin/",
    "/admin/helpdesk/inbox/",
    "/admin/captain/assistant/add/",
    "/admin/axes/accessattempt/",
]


def test_every_page_allows_scripts_and_styles_from_this_origin_only(client, team):
    pages = ["/auth/login/", "/auth/password_reset/"]
    responses = [client.get(url) for url in pages]
    client.force_login(team["admin"])
    responses += [client.get(url) for url in [*dashboard_urls(team), *ADMIN_URLS]]

    for response in responses:
        assert response.status_code == 200, response.request["PATH_INFO"]
        directives = policy(response)
        assert directives["default-src"] == ["'self'"]
        assert directives["script-src"] == ["'self'"]  # no nonce: these pages have no inline code
        assert directives["style-src"] == ["'self'"]
        assert directives["object-src"] == ["'none'"]
        assert directives["frame-ancestors"] == ["'none'"]


def test_our_templates_hold_no_inline_script_style_or_event_handler():
    offences = []
    for path in (p for d in TEMPLATE_DIRS for p in d.rglob("*.html")):
        name = path.relative_to(settings.BASE_DIR)
        # Template comments may talk about "<script>"; they never reach the page.
        text = re.sub(r"{% comment %}.*?{% endcomment %}|{#.*?#}", "", path.read_text(), flags=re.S)
        for tag in re.finditer(r"<(script|style)\b[^>]*>", text):
            if tag.group(1) == "script" and "src=" in tag.group(0):
                continue
            if 'nonce="{{ request.csp_nonce }}"' not in tag.group(0):
                offences.append(f"{name}: {tag.group(0)}")
        for attribute in re.finditer(r"<[a-zA-Z][^>]*\s(style|on[a-z]+)\s*=", text):
            offences.append(f"{name}: {attribute.group(1)}= attribute")
        if "javascript:" in text:
            offences.append(f"{name}: javascript: URL")
    assert offences == []


def test_the_api_docs_inline_code_carries_this_requests_nonce(db):
    client = Client()
    first, second = client.get("/api/docs/"), client.get("/api/docs/")
    nonces = []
    for response in (first, second):
        directives = policy(response)
        (nonce,) = [v for v in directives["script-src"] if v.startswith("'nonce-")]
        assert directives["style-src"] == ["'self'", nonce]
        value = nonce.removeprefix("'nonce-").removesuffix("'")
        html = response.content.decode()
        assert html.count(f'nonce="{value}"') == 2  # the inline <style> and <script>
        assert not re.search(r"<(script|style)>", html)
        nonces.append(value)
    assert nonces[0] != nonces[1]  # a fresh nonce per response


COLLECT_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + e.sourceFile + ":" + e.lineNumber);
});
"""


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_pages_work_in_a_browser_under_the_policy(browser, live_server, team):  # noqa: F811
    page = browser.page
    page.add_init_script(COLLECT_VIOLATIONS)
    violations: dict[str, list[str]] = {}

    def visit(url: str) -> None:
        page.goto(f"{live_server.url}{url}")
        page.wait_for_load_state("networkidle")
        violations[url] = page.evaluate("window.__csp")

    visit("/auth/login/?next=/app/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)
    page.click("button:has-text('Sign in')")
    page.wait_for_url(f"{live_server.url}/app/accounts/**")
    for url in dashboard_urls(team):
        visit(url)
    # The dashboard's own script runs: the account switcher submits on change (dashboard.js).
    assert page.evaluate("document.querySelector('select[data-autosubmit]') !== null")

    for url in ADMIN_URLS:
        visit(url)
    # The admin's scripts run: the change form's "Save" row and the collapsible navigation sidebar.
    visit("/admin/captain/assistant/add/")
    assert page.locator("#toggle-nav-sidebar").is_visible()
    browser.shot("admin-change-form")

    visit("/api/docs/")
    page.locator(".swagger-ui .info .title").wait_for()
    page.locator(".opblock").first.wait_for()  # the schema was fetched and rendered
    violations["/api/docs/"] = page.evaluate("window.__csp")
    browser.shot("api-docs")

    assert {url: found for url, found in violations.items() if found} == {}
    # Chromium reports each refused script or style on the console too (the admin's missing /favicon.ico,
    # a 404, is the one other error there).
    assert [e for e in browser.console_errors if "Content Security Policy" in e] == []
