"""Reading mail (helpdesk.channels.email.mime) from client-shaped fixtures (tests/fixtures/email/): the new text
only, the threading keys, and automated mail recognised; malformed mail refused with 400, never an exception."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpdesk.channels.base import WebhookRejected
from helpdesk.channels.email.mime import parse_mail

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "email"


def fixture(name: str) -> bytes:
    return (FIXTURES / f"{name}.eml").read_bytes()


def test_a_gmail_reply_keeps_only_the_new_text_and_its_thread():
    mail = parse_mail(fixture("gmail_reply"))
    assert mail.text == "Thanks! Can you send it to my office instead?"
    assert (mail.sender, mail.sender_name) == ("ann.lee@gmail.com", "Ann Lee")
    assert mail.message_id == "<CAF=k2pT3x7Q+gmail-1@mail.gmail.com>"
    assert mail.in_reply_to == "<helpdesk-reply-10@shop.example>"
    assert mail.references == ("<helpdesk-reply-10@shop.example>",)
    assert mail.subject == "Re: Where is my parcel?"
    assert mail.automated == ""


def test_an_outlook_html_only_mail_is_read_as_text_without_styles_or_the_quoted_mail():
    mail = parse_mail(fixture("outlook_html"))
    assert mail.subject == "我的订单"
    assert mail.text.startswith("我的订单还没到，请帮忙查一下。")
    assert "color:red" not in mail.text
    assert "old text" not in mail.text


def test_apple_mail_loses_its_sent_from_signature():
    mail = parse_mail(fixture("apple_mail"))
    assert mail.text == "Hi, could you send me a return label please?"
    assert mail.message_id == "<5E1B2C3D-APPLE-1@icloud.com>"


def test_a_forwarded_mail_keeps_what_was_forwarded_for_the_reader():
    mail = parse_mail(fixture("forwarded"))
    assert mail.text.startswith("Please check the invoice below")
    assert mail.automated == ""


@pytest.mark.parametrize(
    ("name", "reason"),
    [("auto_reply", "Auto-Submitted: auto-replied"), ("bounce", "delivery status notification")],
)
def test_auto_replies_and_bounces_are_recognised(name, reason):
    assert parse_mail(fixture(name)).automated == reason


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ("Precedence: bulk", "Precedence: bulk"),
        ("X-Autorespond: 1", "X-Autorespond"),
        ("Auto-Submitted: no", ""),
        ("Return-Path: <>", "bounce"),
    ],
)
def test_each_automation_header(headers, reason):
    raw = f"From: a@b.example\r\nMessage-ID: <1@b.example>\r\n{headers}\r\n\r\nhello".encode()
    assert parse_mail(raw).automated == reason


def test_a_mail_without_a_message_id_gets_a_stable_one():
    raw = b"From: a@b.example\r\n\r\nhello"
    assert parse_mail(raw).message_id == parse_mail(raw).message_id
    assert parse_mail(raw).message_id.startswith("<sha256-")


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\xff\xfe\x00garbage",
        b"From: \xc3\x28\xa0\xa1\r\n\r\nbody",
        b"Subject: no sender\r\n\r\nbody",
        b"From: <a@b.example>\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\nContent-Type: multipart/mixed",
    ],
)
def test_malformed_mail_is_refused_or_read_never_raising_anything_else(raw):
    try:
        mail = parse_mail(raw)
    except WebhookRejected as exc:
        assert exc.status == 400
    else:
        assert mail.sender == "a@b.example"


def test_eight_bit_headers_and_unknown_charsets_are_read():
    raw = (
        "From: Zoë <zoe@example.com>\r\nSubject: Größe\r\nMessage-ID: <8bit@example.com>\r\n"
        "Content-Type: text/plain; charset=x-unknown\r\n\r\nHallo, die Größe passt nicht."
    ).encode()
    mail = parse_mail(raw)
    assert mail.sender == "zoe@example.com"
    assert "passt nicht" in mail.text
