"""Browser tests: Playwright (python) driving Debian's system chromium against pytest-django's live server.

No browser is ever downloaded: `scripts/setup --dev` installs the `chromium` package and we point Playwright at
/usr/bin/chromium. Every page a test visits is saved under test-output/screenshots/ for a reviewer.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
PASSWORD = "pass-word-123"
"""Every test user's password (tests.factories.UserFactory)."""
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Playwright's sync API runs an event loop in the test's thread, and Django refuses ORM calls from a thread with
# a running loop unless told this is deliberate. The test thread only drives the browser and reads/writes
# fixtures; the server runs in its own thread.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@dataclass
class Browser:
    """One page in a fresh chromium profile, recording dialogs and console errors."""

    page: object
    test_name: str
    dialogs: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    shots: list[Path] = field(default_factory=list)

    def shot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{self.test_name}--{len(self.shots) + 1:02d}-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        self.shots.append(path)
        return path


@pytest.fixture
def browser(request, tmp_path) -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium package (scripts/setup --dev does)")
    from playwright.sync_api import sync_playwright

    test_name = re.sub(r"[^\w-]+", "_", request.node.name)
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),  # a new, empty user data dir for every test
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1360, "height": 900},
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(15_000)
            state = Browser(page=page, test_name=test_name)

            def on_dialog(dialog) -> None:
                state.dialogs.append(dialog.message)
                dialog.dismiss()

            page.on("dialog", on_dialog)
            page.on("console", lambda m: state.console_errors.append(m.text) if m.type == "error" else None)
            yield state
        finally:
            context.close()


SignIn = Callable[..., object]


@pytest.fixture
def sign_in() -> SignIn:
    """Sign a page in through the login form, as a person does: the one place the browser tests do it.

    `sign_in(page, base_url, "bob")` opens `/auth/login/?next=/app/` (`next_path=` for another page), fills the
    form, submits it with the button labelled `button` (the page's language: "登录" in Chinese) and waits for
    the page it leads to (`wait_for`, a URL glob; `None` to not wait). `go=False` fills the login page the
    browser is already on (a test that was just sent there). Any page works: the `browser` fixture's, or one
    of a test's own contexts. Returns the page."""

    def sign_in(
        page,
        base_url: str,
        username: str,
        *,
        next_path: str = "/app/",
        wait_for: str | None = "**/app/**",
        button: str = "Sign in",
        go: bool = True,
    ):
        if go:
            page.goto(f"{base_url}/auth/login/?next={next_path}")
        page.fill("#id_username", username)
        page.fill("#id_password", PASSWORD)
        page.click(f"button:has-text('{button}')")
        if wait_for:
            page.wait_for_url(wait_for)
        return page

    return sign_in
