"""Password reset through Django's own views under /auth/: a known address gets a mail with a working link, an
unknown one gets the very same answer and no mail (no way to learn who has an account)."""

from __future__ import annotations

import re

import pytest
from django.core import mail

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limit(redis_url):
    """The per-address counters live in Redis (flushed for each test by `redis_url`)."""


def test_unknown_and_known_addresses_get_the_same_answer(client):
    UserFactory(username="carol", email="carol@example.com")
    known = client.post("/auth/password_reset/", {"email": "carol@example.com"})
    unknown = client.post("/auth/password_reset/", {"email": "nobody@example.com"})
    assert known.status_code == unknown.status_code == 302
    assert known["Location"] == unknown["Location"] == "/auth/password_reset/done/"
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["carol@example.com"]


def test_the_mailed_link_sets_a_new_password_once(client):
    user = UserFactory(username="dave", email="dave@example.com")
    client.post("/auth/password_reset/", {"email": "dave@example.com"})
    link = re.search(r"/auth/reset/[^/\s]+/[^/\s]+/", mail.outbox[0].body)
    assert link is not None
    form_page = client.get(link.group(0), follow=True)
    set_url = form_page.redirect_chain[-1][0]
    new = "a-long-new-Passw0rd!"
    done = client.post(set_url, {"new_password1": new, "new_password2": new})
    assert done.status_code == 302
    user.refresh_from_db()
    assert user.check_password(new)
    # The link is spent once the password changed: a second use shows the invalid-link page.
    again = client.get(link.group(0), follow=True)
    assert again.context["validlink"] is False


def test_reset_requests_are_rate_limited_per_address(client, settings):
    settings.HELPDESK = {**settings.HELPDESK, "PASSWORD_RESETS_PER_HOUR": 2}
    UserFactory(username="erin", email="erin@example.com")
    answers = [
        client.post("/auth/password_reset/", {"email": "erin@example.com"}).status_code for _ in range(3)
    ]
    assert answers == [302, 302, 429]
    assert len(mail.outbox) == 2


def test_the_reset_pages_are_ours_and_speak_the_browsers_language(client):
    """Our frame (not the admin's), reached from the sign-in page, in Chinese for a Chinese browser."""
    sign_in_page = client.get("/auth/login/").content.decode()
    assert 'href="/auth/password_reset/"' in sign_in_page
    english = client.get("/auth/password_reset/")
    assert english.status_code == 200
    assert [t.name for t in english.templates][:2] == [
        "registration/password_reset_form.html",
        "dashboard/base.html",
    ]
    assert "Reset your password" in english.content.decode()
    chinese = client.get("/auth/password_reset/", HTTP_ACCEPT_LANGUAGE="zh-CN")
    assert "重置密码" in chinese.content.decode()
    bad_link = client.get("/auth/reset/MQ/set-password/", follow=True, HTTP_ACCEPT_LANGUAGE="zh-CN")
    assert "此链接已失效" in bad_link.content.decode()
