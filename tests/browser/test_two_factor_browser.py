"""Two-factor sign-in in chromium, as a person does it: set it up from their own page (scanning stands in for
reading the key under the QR code; the code is computed here from it, as an authenticator app does), sign out,
sign in with the password and a code, and be refused a wrong code. At a phone's width."""

from __future__ import annotations

import time

import pytest
from django_otp.oath import TOTP
from playwright.sync_api import expect

from helpdesk.models import Membership, SignInEvent
from tests.factories import AccountFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def early_in_a_step(margin: float = 12.0) -> None:
    """Wait, if need be, until at least `margin` seconds of the current 30-second step remain. A set-up code made
    in one step and checked in the next is accepted with a drift of -1 step, which django-otp then keeps
    (OTP_TOTP_SYNC), so the next step's code used to sign in was refused: the test failed when the set-up
    crossed a step boundary on a busy machine."""
    left = 30 - time.time() % 30
    if left < margin:
        time.sleep(left + 0.1)


def app_code(secret: str, steps_ahead: int = 0) -> str:
    """What an authenticator app shows for the base32 `secret` (30-second steps, 6 digits)."""
    import base64

    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    totp = TOTP(key, step=30, t0=0, digits=6, drift=0)
    totp.time = time.time() + steps_ahead * 30
    return f"{totp.token():06d}"


def test_a_person_turns_on_two_factor_and_signs_in_with_a_code(browser, sign_in, live_server):
    account = AccountFactory(name="Acme")
    MembershipFactory(account=account, user=UserFactory(username="mia"), role=Membership.Role.AGENT)
    page = browser.page
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, live_server.url, "mia", wait_for="**/app/**")

    page.click("[data-my-security]")
    page.wait_for_url("**/app/security/")
    expect(page.locator("[data-two-factor-state]")).to_have_attribute("data-two-factor-state", "off")
    page.click("[data-two-factor-start] button")
    expect(page.locator("[data-totp-qr] svg")).to_be_visible()
    secret = page.locator("[data-totp-secret]").inner_text().strip()
    browser.shot("qr")
    early_in_a_step()
    page.fill("[data-two-factor-confirm] input[name=code]", app_code(secret))
    page.click("[data-two-factor-confirm] button")
    expect(page.locator("[data-backup-codes] li")).to_have_count(10)
    expect(page.locator("[data-two-factor-state]")).to_have_attribute("data-two-factor-state", "on")
    browser.shot("backup-codes")

    page.click("form[action='/auth/logout/'] button")
    sign_in(page, live_server.url, "mia", wait_for="**/auth/two-factor/")
    # A wrong code: refused, said plainly, still not signed in.
    right = app_code(secret, steps_ahead=1)
    page.fill("input[name=code]", "000000" if right != "000000" else "111111")
    page.click("[data-two-factor-form] button")
    expect(page.locator(".error[role=alert]")).to_contain_text("not right")
    browser.shot("wrong-code")
    assert page.url.endswith("/auth/two-factor/")

    # The right one, once the wrong code's throttle (1 s) has passed.
    time.sleep(1.2)
    page.fill("input[name=code]", right)
    page.click("[data-two-factor-form] button")
    page.wait_for_url(f"**/app/accounts/{account.pk}/**")
    expect(page.locator("[data-my-security]")).to_have_text("mia")

    page.goto(f"{live_server.url}/app/security/")
    rows = page.locator("[data-sign-in-history] tr[data-sign-in]")
    expect(rows.first).to_have_attribute("data-sign-in", SignInEvent.Outcome.SIGNED_IN_TWO_FACTOR)
    expect(page.locator("[data-sign-in-history] tr[data-sign-in='wrong_code']")).to_have_count(1)
    assert page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth") <= 0
    browser.shot("history")
    # The wrong code answered 400, which chromium logs; nothing else may.
    assert [e for e in browser.console_errors if "status of 400" not in e] == [], browser.console_errors
