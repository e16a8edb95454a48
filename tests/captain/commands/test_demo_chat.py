"""`manage.py captain_demo_chat` tells the truth: a new customer per run, a conversation that is with people is
named as such (not blamed on the worker), the demo inbox's callback URL is put back however the command exits,
and its output carries no httpx request logs.

The command runs for real against the live server (pytest-django's `live_server`): it POSTs the signed webhook
with httpx, Django stores the message and publishes the AI task to the test redis-server. Instead of a Celery
worker process, `FakeWorker` (a thread) plays the worker's part with the real services: `outcome_apply` for the
AI's decision and the real `message_deliver` task body, which POSTs the signed reply to the command's callback
receiver. tests/e2e proves a real worker does the same with real tasks.
"""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import httpx
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from captain.answering.models import ReplyJob, Run
from captain.answering.services.outcomes import outcome_apply
from captain.assistants.models import Assistant
from captain.management.commands import captain_demo_chat
from captain.management.commands.captain_demo_seed import DEMO_WEBHOOK_TOKEN
from captain.runtime import HumanHandoff, Outcome, Reply
from helpdesk.models import Contact, ContactInbox, Conversation, Delivery, Inbox, Message
from helpdesk.services.conversations import conversation_escalate
from helpdesk.tasks import message_deliver
from tests.support.database import database_url_for_subprocess
from tests.support.servers import ROOT, free_port

pytestmark = [pytest.mark.django_db(transaction=True)]

ORIGINAL_CALLBACK = "http://127.0.0.1:9/customer-system/callback"
CONTACT_LINE = re.compile(r"^contact: (demo-[0-9a-f]+) ", re.MULTILINE)


def decide(message: Message) -> Outcome:
    if "person" in message.content.lower():
        return HumanHandoff(reason="The customer asked for a person.")
    return Reply(text=f"Happy to help with: {message.content}")


class FakeWorker:
    """Plays the Celery worker: answers the demo inbox's pending customer messages through the real outcome
    service and delivers queued outgoing messages with the real delivery task body (to the callback URL)."""

    def __init__(self, decide: Callable[[Message], Outcome] = decide, before_apply=None) -> None:
        self.decide = decide
        self.before_apply = before_apply
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> FakeWorker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        assert not self.errors, self.errors

    def _loop(self) -> None:
        try:
            assistant = Assistant.objects.get(assistant_inboxes__inbox__webhook_token=DEMO_WEBHOOK_TOKEN)
            while not self._stop.is_set():
                pending = Message.objects.filter(
                    inbox__webhook_token=DEMO_WEBHOOK_TOKEN,
                    message_type=Message.Type.INCOMING,
                    reply_job__status=ReplyJob.Status.PENDING,
                )
                for message in pending:
                    if self.before_apply:
                        self.before_apply(message)
                    outcome_apply(
                        conversation_id=message.conversation_id,
                        assistant=assistant,
                        outcome=self.decide(message),
                        result=None,
                        agent_names={},
                        trigger_message_ids=[message.id],
                        trace_id="0" * 32,
                        duration_ms=5,
                    )
                queued = Delivery.objects.filter(
                    message__inbox__webhook_token=DEMO_WEBHOOK_TOKEN, status=Delivery.Status.QUEUED
                ).values_list("pk", flat=True)
                for message_id in queued:
                    message_deliver.apply(args=[message_id])
                time.sleep(0.05)
        except BaseException as exc:  # surfaced by __exit__
            self.errors.append(exc)
        finally:
            connection.close()


@pytest.fixture
def demo(redis_url, monkeypatch):
    # The receiver's port, as scripts/run would allowlist it: a free one, so a running demo is not in the way.
    monkeypatch.setenv("DEMO_CALLBACK_PORT", str(free_port()))
    call_command("captain_demo_seed", "--force", stdout=io.StringIO())
    inbox = Inbox.objects.get(webhook_token=DEMO_WEBHOOK_TOKEN)
    Inbox.objects.filter(pk=inbox.pk).update(callback_url=ORIGINAL_CALLBACK)
    return inbox


def chat(live_server, text: str, *args: str, timeout: float = 60) -> str:
    out = io.StringIO()
    try:
        call_command(
            "captain_demo_chat",
            text,
            "--base-url",
            live_server.url,
            "--timeout",
            str(timeout),
            *args,
            stdout=out,
            stderr=out,
        )
    except CommandError as exc:
        exc.output = out.getvalue()  # type: ignore[attr-defined]
        raise
    return out.getvalue()


def callback_url() -> str:
    return Inbox.objects.values_list("callback_url", flat=True).get(webhook_token=DEMO_WEBHOOK_TOKEN)


def test_two_runs_without_contact_are_two_customers_with_two_conversations(live_server, demo):
    with FakeWorker():
        first = chat(live_server, "I want a refund for order 42")
        second = chat(live_server, "Where is my parcel?")

    contacts = [CONTACT_LINE.search(first).group(1), CONTACT_LINE.search(second).group(1)]
    assert contacts[0] != contacts[1]
    assert f"--contact {contacts[0]}" in first  # how to continue is printed
    assert sorted(ContactInbox.objects.filter(inbox=demo).values_list("source_id", flat=True)) == sorted(
        contacts
    )
    assert Contact.objects.count() == 2
    assert Conversation.objects.filter(inbox=demo).count() == 2
    for output, text in ((first, "I want a refund for order 42"), (second, "Where is my parcel?")):
        assert f"AI: Happy to help with: {text}" in output
        assert "delivered to callback: [" in output and f"] Happy to help with: {text}" in output
        assert "outcome=reply" in output and re.search(r"done in \d+\.\d s", output)
        assert re.search(r"\(\+\d+\.\d s\)", output)  # elapsed time of the reply


def test_given_contact_continues_the_same_conversation(live_server, demo):
    with FakeWorker():
        first = chat(live_server, "Hello")
        contact = CONTACT_LINE.search(first).group(1)
        second = chat(live_server, "Me again", "--contact", contact)

    assert "(a new customer" not in second and f"contact: {contact}" in second
    assert Conversation.objects.filter(inbox=demo).count() == 1
    assert Run.objects.filter(outcome=Run.Outcome.REPLY).count() == 2


def test_conversation_with_people_is_named_promptly_without_blaming_the_worker(live_server, demo):
    with FakeWorker():
        handoff = chat(live_server, "Please let me talk to a person")
    contact = CONTACT_LINE.search(handoff).group(1)
    assert "outcome=human_handoff" in handoff
    assert "now with people" in handoff and "Omit --contact" in handoff

    started = time.monotonic()
    with pytest.raises(CommandError) as raised:
        chat(live_server, "Hello? Anyone?", "--contact", contact, timeout=60)
    elapsed = time.monotonic() - started

    everything = f"{raised.value.output}\n{raised.value}"
    assert elapsed < 10, elapsed  # it did not sit out the 60 s timeout
    assert "is with people" in str(raised.value) and "'open'" in str(raised.value)
    assert "the AI stays quiet" in str(raised.value)
    assert "without --contact" in str(raised.value)
    assert "worker" not in everything.lower()
    assert "Hello? Anyone?" in raised.value.output
    conversation = Conversation.objects.get(contact_inbox__source_id=contact)
    assert f"/conversations/{conversation.id}/" in str(raised.value)


def test_message_skipped_because_people_took_over_meanwhile_is_named(live_server, demo):
    def take_over(message: Message) -> None:
        conversation_escalate(
            conversation=message.conversation, reason="An agent took over", customer_message="", by="Alice"
        )

    with FakeWorker(before_apply=take_over), pytest.raises(CommandError) as raised:
        chat(live_server, "I want a refund")

    assert "The AI skipped your message" in str(raised.value)
    assert "people took over" in str(raised.value) and "Omit --contact" in str(raised.value)
    assert "worker" not in str(raised.value).lower()
    assert "outcome=skipped" in raised.value.output


def test_no_worker_times_out_naming_what_to_check(live_server, demo):
    started = time.monotonic()
    with pytest.raises(CommandError) as raised:
        chat(live_server, "Anyone there?", timeout=1)

    assert time.monotonic() - started < 10
    message = str(raised.value)
    assert "No AI run started within 1 s" in message
    assert "still `pending`" in message and "worker" in message and "worker.log" in message
    assert callback_url() == ORIGINAL_CALLBACK


def test_callback_url_is_restored_after_a_normal_run(live_server, demo):
    seen_during_run: list[str] = []

    def watch(message: Message) -> None:
        seen_during_run.append(callback_url())

    with FakeWorker(before_apply=watch):
        output = chat(live_server, "I want a refund for order 42")

    assert "delivered to callback" in output
    assert seen_during_run and seen_during_run[0] != ORIGINAL_CALLBACK  # the command's own receiver
    assert callback_url() == ORIGINAL_CALLBACK


def test_replies_reach_the_receiver_through_the_demo_allowlist_of_its_port_only(live_server, demo, settings):
    port = os.environ["DEMO_CALLBACK_PORT"]
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": [f"127.0.0.1:{port}"]}
    seen_during_run: list[str] = []
    with FakeWorker(before_apply=lambda message: seen_during_run.append(callback_url())):
        output = chat(live_server, "Where is my parcel?")
    assert seen_during_run == [f"http://127.0.0.1:{port}/captain-demo-chat/callback"]
    assert "delivered to callback: [" in output


def test_a_receiver_port_in_use_is_named_before_anything_is_sent(live_server, demo):
    port = int(os.environ["DEMO_CALLBACK_PORT"])
    with socket.create_server(("127.0.0.1", port)), pytest.raises(CommandError) as refused:
        chat(live_server, "Hello", timeout=5)
    assert f"port {port}" in str(refused.value) and "DEMO_CALLBACK_PORT" in str(refused.value)
    assert not Message.objects.exists() and callback_url() == ORIGINAL_CALLBACK


def test_callback_url_is_restored_after_failing_runs(live_server, demo):
    # The conversation is with people: CommandError.
    with FakeWorker():
        contact = CONTACT_LINE.search(chat(live_server, "I want to talk to a person")).group(1)
    assert callback_url() == ORIGINAL_CALLBACK
    with pytest.raises(CommandError, match="is with people"):
        chat(live_server, "Hello?", "--contact", contact)
    assert callback_url() == ORIGINAL_CALLBACK

    # The web server cannot be reached: CommandError before anything is stored.
    closed = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(CommandError, match="Could not reach"):
        call_command("captain_demo_chat", "Hi", "--base-url", closed, stdout=io.StringIO())
    assert callback_url() == ORIGINAL_CALLBACK


def test_callback_url_is_restored_after_ctrl_c(demo, monkeypatch):
    def interrupted(*args, **kwargs):
        assert callback_url() != ORIGINAL_CALLBACK  # the command's receiver was in place
        raise KeyboardInterrupt

    monkeypatch.setattr(captain_demo_chat.httpx, "post", interrupted)
    with pytest.raises(KeyboardInterrupt):
        call_command("captain_demo_chat", "Hi", stdout=io.StringIO())
    assert callback_url() == ORIGINAL_CALLBACK


def test_restore_leaves_a_callback_url_changed_meanwhile_alone(demo, monkeypatch):
    changed = "http://127.0.0.1:9/set-by-an-admin-meanwhile"

    def admin_edits_then_fails(*args, **kwargs):
        Inbox.objects.filter(webhook_token=DEMO_WEBHOOK_TOKEN).update(callback_url=changed)
        raise httpx.ConnectError("connection refused")

    monkeypatch.setattr(captain_demo_chat.httpx, "post", admin_edits_then_fails)
    with pytest.raises(CommandError):
        call_command("captain_demo_chat", "Hi", stdout=io.StringIO())
    assert callback_url() == changed


def test_output_has_no_httpx_request_logs(live_server, demo):
    """The command as a user runs it (its own process, the project's logging settings, INFO on the root logger):
    stdout and stderr together carry the conversation but none of httpx's "HTTP Request:" lines."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url_for_subprocess(),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "LOG_LEVEL": "INFO",
    }
    with FakeWorker():
        proc = subprocess.run(
            [
                sys.executable,
                "manage.py",
                "captain_demo_chat",
                "I want a refund for order 42",
                "--base-url",
                live_server.url,
                "--timeout",
                "60",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "POST " in output and "-> 200" in output  # the webhook went out through httpx
    assert "delivered to callback" in output
    assert "HTTP Request:" not in output
    assert callback_url() == ORIGINAL_CALLBACK
