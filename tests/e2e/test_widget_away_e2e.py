"""The widget's away hours end to end with real parts: outside the inbox's business hours a visitor leaves their
e-mail and asks in the widget (through Django's visitor API); a real Celery worker answers with the scripted model
server through the normal AI pipeline; the answer shows in the chat and follows by e-mail over SMTP to a real SMTP
server (aiosmtpd) on 127.0.0.1; an agent's later answer follows too, threaded under the first mail."""

from __future__ import annotations

import email
import email.policy
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from django.db import transaction

from helpdesk.models import Message
from helpdesk.services.messages import message_create_agent_reply
from tests.factories import AssistantInboxFactory, UserFactory
from tests.helpdesk.channels_email.support import email_inbox
from tests.helpdesk.channels_email.test_smtp_out import Sink
from tests.helpdesk.channels_widget.support import call, new_visitor, send, widget_inbox
from tests.helpdesk.channels_widget.test_business_hours import closed_now
from tests.support import fake_llm_server as fake
from tests.support.database import database_url_for_subprocess
from tests.support.servers import free_port, start_celery_worker, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

REPLY = "Yes, we ship to Norway; it takes three days."


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


def test_an_away_hours_question_gets_the_ai_answer_and_the_agents_by_e_mail_threaded(client, stack):
    mail_inbox = email_inbox(smtp_host="127.0.0.1", smtp_port=str(stack["port"]), smtp_security="none")
    chat = widget_inbox(account=mail_inbox.account, name="Shop chat")
    chat.provider_config.update(
        business_hours=closed_now(), follow_up_inbox=str(mail_inbox.id), away_message="Back at 9."
    )
    chat.save()
    AssistantInboxFactory(inbox=chat, assistant__account=chat.account)

    token = new_visitor(client, chat)
    session = call(client, "POST", chat, "session", token=token).json()
    assert (session["away"], session["away_message"], session["ask_email"]) == (True, "Back at 9.", True)
    assert (
        call(client, "POST", chat, "contact", token=token, body={"email": "ann@example.com"}).status_code
        == 200
    )
    assert send(client, chat, token, "Do you ship to Norway?").status_code == 201

    sink, log = stack["sink"], stack["worker"].log
    wait_for(lambda: sink.mails, timeout=90, what=f"the AI's answer by e-mail; worker log:\n{log()}")
    ai_reply = Message.objects.get(inbox=chat, message_type=Message.Type.OUTGOING, content=REPLY)
    shown = call(client, "GET", chat, "messages", token=token).json()["messages"]
    assert [m["text"] for m in shown if not m["incoming"]] == [REPLY]  # the chat shows it too

    with transaction.atomic():
        message_create_agent_reply(
            conversation=ai_reply.conversation, user=UserFactory(), content="Your parcel can leave today."
        )
    wait_for(
        lambda: len(sink.mails) > 1, timeout=60, what=f"the agent's answer by e-mail; worker log:\n{log()}"
    )

    first, second = (email.message_from_bytes(raw, policy=email.policy.default) for _, _, raw in sink.mails)
    assert [rcpts for _, rcpts, _ in sink.mails] == [["ann@example.com"], ["ann@example.com"]]
    assert first.get_content().strip() == REPLY
    assert first["Message-ID"] == f"<helpdesk-reply-{ai_reply.id}@shop.example>"
    assert second.get_content().strip() == "Your parcel can leave today."
    assert second["In-Reply-To"] == first["Message-ID"]
    assert first["Message-ID"] in second["References"].split()
