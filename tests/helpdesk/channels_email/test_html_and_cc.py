"""HTML mail (helpdesk.channels.email.html, helpdesk.services.message_extras): the AI reads the text part, the HTML
is sanitised with nh3 and kept as the message's `message.html` for agents to open (served sandboxed); the subject
and the Cc are shown on the conversation page. A fixture in the shape of a real client's HTML mail carries the usual
attacks (script, event handlers, `javascript:` link, tracking pixel, frame, form); the sanitiser is fuzzed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from helpdesk.channels.email.html import sanitized_html
from helpdesk.models import Attachment, Membership, Message
from tests.factories import MembershipFactory, UserFactory
from tests.helpdesk.channels_email.support import email_inbox, post, signed_fields
from tests.helpdesk.channels_email.test_mime import fixture

pytestmark = pytest.mark.django_db

DANGEROUS = ("<script", "javascript:", "onload", "onerror", "<img", "<iframe", "<form", "<input", "<style")


def deliver(client, raw: bytes) -> Message:
    inbox = email_inbox()
    response = post(client, inbox, signed_fields(raw))
    assert response.status_code == 200, response.content
    return Message.objects.get(pk=response.json()["message_ids"][0])


def test_the_ai_reads_the_text_and_people_get_the_sanitised_html(client, settings):
    message = deliver(client, fixture("html_newsletter_style"))

    assert message.content == "Hello, could you send the invoice for order 1042 to finance@example.net?"
    (kept,) = Attachment.objects.filter(message=message)
    assert (kept.status, kept.file_name, kept.content_type) == (
        "stored",
        "message.html",
        "text/html; charset=utf-8",
    )
    html = kept.file.open("rb").read().decode()
    assert "<b>invoice</b>" in html
    assert (
        '<a href="https://shop.example/orders/1042" rel="noopener noreferrer nofollow">order page</a>' in html
    )
    assert "<td>1042</td>" in html
    assert not [word for word in DANGEROUS if word in html.lower()]
    assert "tracker.example" not in html and "evil.example" not in html


def test_agents_see_subject_cc_and_can_open_the_html_served_sandboxed(client):
    message = deliver(client, fixture("html_newsletter_style"))
    agent = UserFactory()
    MembershipFactory(account=message.account, user=agent, role=Membership.Role.AGENT)
    client.force_login(agent)

    page = client.get(f"/app/accounts/{message.account_id}/conversations/{message.conversation_id}/")

    assert page.status_code == 200
    text = page.content.decode()
    assert '<span class="mail-subject">Invoice for order 1042</span>' in text
    assert '<span class="mail-cc">finance@example.net, tom@example.net</span>' in text
    kept = Attachment.objects.get(message=message)
    link = f"/app/accounts/{message.account_id}/attachments/{kept.id}/"
    assert link in text and "message.html" in text
    served = client.get(link)
    assert served.status_code == 200
    assert served["Content-Type"] == "text/html; charset=utf-8"
    assert (
        "sandbox" in served["Content-Security-Policy"]
        and "default-src 'none'" in served["Content-Security-Policy"]
    )
    assert b"<b>invoice</b>" in b"".join(served.streaming_content)


def test_a_mail_without_html_keeps_no_file(client):
    message = deliver(client, fixture("apple_mail"))
    assert not Attachment.objects.filter(message=message).exists()
    assert message.attachments == []


def test_html_over_the_size_limit_is_noted_and_the_mail_still_stored(client, settings):
    settings.HELPDESK = {**settings.HELPDESK, "ATTACHMENT_MAX_BYTES": 200}

    message = deliver(client, fixture("html_newsletter_style"))

    assert message.content.startswith("Hello, could you send the invoice")
    (kept,) = Attachment.objects.filter(message=message)
    assert kept.status == "refused"
    assert "over 200 bytes and was not kept; its text was" in kept.error
    assert not kept.file


def test_what_a_mail_client_writes_is_kept_and_what_runs_is_not():
    assert (
        sanitized_html('<p style="color:red" onclick="x()">Hi <u>there</u></p>') == "<p>Hi <u>there</u></p>"
    )
    assert sanitized_html("<script>alert(1)</script><style>p{}</style>") == ""
    assert (
        sanitized_html('<a href="data:text/html,<script>">x</a>')
        == '<a rel="noopener noreferrer nofollow">x</a>'
    )


FRAGMENTS = st.sampled_from(
    [
        "<script>alert(1)</script>",
        "<scr<script>ipt>",
        '<img src=x onerror="alert(1)">',
        '<a href="javascript:alert(1)">',
        '<a href=" jAvAsCrIpT:alert(1)">',
        "<svg onload=alert(1)>",
        "<iframe src=//x>",
        "<style>*{}</style>",
        '<div onmouseover="x">',
        "<!-- <script> -->",
        "<p>",
        "</p>",
        "<b>",
        "text",
        "&lt;script&gt;",
        "<",
        ">",
        '"',
    ]
)


@hsettings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(FRAGMENTS, st.text(max_size=20)), max_size=30).map("".join))
def test_no_mix_of_attacks_survives_sanitising(html):
    cleaned = sanitized_html(html).lower()
    assert "<script" not in cleaned
    assert "javascript:" not in cleaned
    for tag in ("<img", "<iframe", "<svg", "<style"):
        assert tag not in cleaned
    assert " onerror=" not in cleaned and " onload=" not in cleaned and " onmouseover=" not in cleaned
