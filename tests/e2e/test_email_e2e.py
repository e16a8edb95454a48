"""E-mail end to end with real parts: a signed Mailgun delivery of a customer's mail goes in through Django, a real
Celery worker answers it with the scripted model server through the normal AI pipeline, and the reply is sent over
SMTP to a real SMTP server (aiosmtpd) on 127.0.0.1, threaded under the customer's mail. An out-of-office answer
from the same customer is stored and never answered."""

from __future__ import annotations

import email
import email.policy
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller

from helpdesk.models import Delivery, Message
from tests.factories import AssistantInboxFactory
from tests.helpdesk.channels_email.support import email_inbox, post, signed_fields
from tests.helpdesk.channels_email.test_mime import fixture
from tests.helpdesk.channels_email.test_smtp_out import Sink
from tests.support import fake_llm_server as fake
from tests.support.database import database_url_for_subprocess
from tests.support.servers import free_port, start_celery_worker, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

REPLY = "Of course, we will send it to your office."


@pytest.fixture
def stack(redis_url, tmp_path: Path):
    sink, port = Sink(), free_port()
    smtp = Controller(sink, hostname="127.0.0.1", port=port)
    smtp.start()
    with fake.FakeLLMServer(responder=lambda request: fake.text(REPLY)) as model:
        worker = start_celery_worker(
            env={
                "DATABASE_URL": database_url_for_subprocess(),
                "REDIS_URL": redis_url,
                "OPENAI_BASE_URL": model.base_url,
                "OPENAI_API_KEY": "test",
                "CAPTAIN_LLM_TIMEOUT": "5",
                "CAPTAIN_LLM_MAX_RETRIES": "0",
                "CAPTAIN_DEBOUNCE_SECONDS": "0",
            },
            log_path=tmp_path / "worker.log",
        )
        try:
            yield {"sink": sink, "port": port, "worker": worker}
        finally:
            worker.stop()
            smtp.stop()


def test_a_customer_mail_gets_the_ai_answer_threaded_in_their_mail_client(client, stack):
    inbox = email_inbox(smtp_host="127.0.0.1", smtp_port=str(stack["port"]), smtp_security="none")
    AssistantInboxFactory(inbox=inbox, assistant__account=inbox.account)

    assert post(client, inbox, signed_fields(fixture("gmail_reply"))).status_code == 200

    sink = stack["sink"]
    wait_for(lambda: sink.mails, timeout=90, what=f"the reply by SMTP; worker log:\n{stack['worker'].log()}")
    ((sender, recipients, raw),) = sink.mails
    assert (sender, recipients) == ("help@shop.example", ["ann.lee@gmail.com"])
    mail = email.message_from_bytes(raw, policy=email.policy.default)
    assert mail.get_content().strip() == REPLY
    assert mail["In-Reply-To"] == "<CAF=k2pT3x7Q+gmail-1@mail.gmail.com>"
    assert mail["Subject"] == "Re: Where is my parcel?"
    reply = Message.objects.get(inbox=inbox, message_type=Message.Type.OUTGOING, content=REPLY)
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
