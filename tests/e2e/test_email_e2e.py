"""E-mail end to end with real parts (tests/e2e/conftest.py): a signed Mailgun delivery of a customer's mail goes
in through Django, a real Celery worker answers it with the scripted model server through the normal AI pipeline,
and the reply is sent over SMTP to a real SMTP server (aiosmtpd) on 127.0.0.1, threaded under the customer's mail
and written as a letter: the inbox's greeting and sign-off, not the AI's own. An out-of-office answer from the same
customer is stored and never answered."""

from __future__ import annotations

import email
import email.policy

import pytest

from helpdesk.models import Delivery, Message
from tests.factories import AssistantInboxFactory
from tests.helpdesk.channels_email.support import email_inbox, post, signed_fields
from tests.helpdesk.channels_email.test_mime import fixture
from tests.support.servers import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

REPLY = "Of course, we will send it to your office."


def test_a_customer_mail_gets_the_ai_answer_threaded_in_their_mail_client(client, mail_stack):
    inbox = email_inbox(
        **mail_stack.smtp_config(), greeting="Hello {name},", sign_off="Best regards,\nShop Support"
    )
    AssistantInboxFactory(inbox=inbox, assistant__account=inbox.account)
    # The AI writes its own salutation and closing: the inbox's take their place.
    mail_stack.answers["office"] = f"Hi Ann,\n\n{REPLY}\n\nKind regards,\nYour AI"

    assert post(client, inbox, signed_fields(fixture("gmail_reply"))).status_code == 200

    sink = mail_stack.sink
    wait_for(
        lambda: sink.mails, timeout=90, what=f"the reply by SMTP; worker log:\n{mail_stack.worker.log()}"
    )
    ((sender, recipients, raw),) = sink.mails
    assert (sender, recipients) == ("help@shop.example", ["ann.lee@gmail.com"])
    mail = email.message_from_bytes(raw, policy=email.policy.default)
    letter = mail.get_content().replace("\r\n", "\n")
    assert letter == f"Hello Ann Lee,\n\n{REPLY}\n\nBest regards,\nShop Support\n"
    assert mail["In-Reply-To"] == "<CAF=k2pT3x7Q+gmail-1@mail.gmail.com>"
    assert mail["Subject"] == "Re: Where is my parcel?"
    reply = Message.objects.get(inbox=inbox, message_type=Message.Type.OUTGOING)
    assert mail["Message-ID"] == f"<helpdesk-reply-{reply.id}@shop.example>"
    wait_for(
        lambda: Delivery.objects.filter(message=reply, status=Delivery.Status.SENT).exists(),
        timeout=30,
        what="the delivery marked sent",
    )

    # The customer's out-of-office answer to our reply: kept, never answered (no second mail goes out).
    assert post(client, inbox, signed_fields(fixture("auto_reply"))).status_code == 200
    assert Message.objects.filter(inbox=inbox, content__contains="out of the office").exists()
    with pytest.raises(TimeoutError):
        wait_for(lambda: len(sink.mails) > 1, timeout=8, what="no answer to the auto-reply")
    assert Message.objects.filter(inbox=inbox, message_type=Message.Type.OUTGOING).count() == 1
