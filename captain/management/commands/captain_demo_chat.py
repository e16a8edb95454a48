"""Send a signed customer message to the demo inbox and print the conversation as it unfolds.

Run `scripts/run` in another terminal first (web server, worker, model), then e.g.:
    .venv/bin/python manage.py captain_demo_chat "Can I return an item I bought last week?"
    .venv/bin/python manage.py captain_demo_chat "And when will it arrive?" --contact demo-1a2b3c4d

Each run is a new customer (a fresh contact id, printed) unless `--contact` names one, so a conversation that an
earlier run handed to people does not swallow the next demo. While it runs, the demo inbox's callback URL points at
a receiver of the command's own; the command puts the previous URL back when it exits, however it exits.

The receiver listens on 127.0.0.1:DEMO_CALLBACK_PORT (default 8082), the one local port scripts/run allowlists
for the outbound policy (scripts/supervisor.py, demo_outbound_allowlist): a fixed port, because an allowlist of
every port of 127.0.0.1 would let a tenant's URL reach Redis and the rest of the machine.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from captain.answering.models import ReplyJob, Run
from captain.answering.services.jobs import job_get
from captain.assistants.models import AssistantInbox
from captain.management.commands.captain_demo_seed import DEMO_WEBHOOK_TOKEN
from helpdesk.channels.api_channel import signed_headers
from helpdesk.delivery.outbox import deliveries_queued
from helpdesk.models import Conversation, Inbox, Message

DEFAULT_CALLBACK_PORT = 8082
"""scripts/supervisor.py's DEMO_CALLBACK_PORT: the same number, so the two agree without shared settings."""
CALLBACK_PATH = "/captain-demo-chat/callback"


def callback_port_default() -> int:
    """DEMO_CALLBACK_PORT from the environment, as scripts/run reads it; else DEFAULT_CALLBACK_PORT."""
    return int(os.environ.get("DEMO_CALLBACK_PORT") or DEFAULT_CALLBACK_PORT)


def callback_url(port: int) -> str:
    return f"http://127.0.0.1:{port}{CALLBACK_PATH}"


# Fits the bundled 0.5B model on a CPU: a triage turn, a specialist turn and a tool call take a minute or two.
DEFAULT_TIMEOUT_SECONDS = 300.0
POLL_SECONDS = 0.3


class _CallbackReceiver:
    """The customer's system behind the callback URL: records every reply event POSTed to it."""

    def __init__(self, port: int) -> None:
        self.events: list[dict[str, Any]] = []
        events = self.events

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    events.append(json.loads(body))
                except ValueError:
                    events.append({"text": body.decode(errors="replace"), "sender": {"type": "?"}})
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        try:
            self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        except OSError as exc:
            raise CommandError(
                f"Cannot receive the replies on port {port} of 127.0.0.1 ({exc.strerror}): is another "
                "captain_demo_chat running? Choose another port with --callback-port or DEMO_CALLBACK_PORT, and "
                "start scripts/run with the same DEMO_CALLBACK_PORT so the outbound policy lets replies reach it."
            ) from None
        self.url = callback_url(self._server.server_address[1])
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class Command(BaseCommand):
    help = "Send a signed customer message to the demo API inbox and print the conversation as it unfolds."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("text")
        parser.add_argument(
            "--contact",
            default=None,
            help="The customer's id on the API channel. Default: a new customer per run (printed, so you can "
            "continue that conversation with --contact <id>).",
        )
        parser.add_argument("--base-url", default=settings.PUBLIC_BASE_URL)
        parser.add_argument(
            "--callback-port",
            type=int,
            default=callback_port_default(),
            help="Port of 127.0.0.1 the replies are received on (default: DEMO_CALLBACK_PORT, else "
            f"{DEFAULT_CALLBACK_PORT}); scripts/run allowlists the same port for the outbound policy.",
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_TIMEOUT_SECONDS,
            help=f"Seconds to wait for the AI (default {DEFAULT_TIMEOUT_SECONDS:.0f}).",
        )

    def handle(
        self,
        *args: Any,
        text: str,
        contact: str | None,
        base_url: str,
        timeout: float,
        callback_port: int,
        **options: Any,
    ) -> None:
        inbox = Inbox.objects.filter(webhook_token=DEMO_WEBHOOK_TOKEN).first()
        if inbox is None:
            raise CommandError("No demo inbox: run `manage.py captain_demo_seed` (scripts/run does).")
        if not AssistantInbox.objects.filter(inbox=inbox).exists():
            raise CommandError(
                "The demo inbox has no AI assistant connected, so nobody would answer: run "
                "`manage.py captain_demo_seed` again (scripts/run does on every start)."
            )
        if contact:
            self.stdout.write(f"contact: {contact}")
        else:
            contact = f"demo-{secrets.token_hex(4)}"
            self.stdout.write(
                f"contact: {contact} (a new customer; continue this conversation with --contact {contact})"
            )

        receiver = _CallbackReceiver(callback_port)
        previous_callback_url = inbox.callback_url
        try:
            Inbox.objects.filter(pk=inbox.pk).update(callback_url=receiver.url)
            self._chat(
                inbox, text=text, contact=contact, base_url=base_url, timeout=timeout, receiver=receiver
            )
        finally:
            # Conditional: if someone changed the URL meanwhile (an admin, another demo run), theirs stays.
            Inbox.objects.filter(pk=inbox.pk, callback_url=receiver.url).update(
                callback_url=previous_callback_url
            )
            receiver.close()

    def _chat(
        self,
        inbox: Inbox,
        *,
        text: str,
        contact: str,
        base_url: str,
        timeout: float,
        receiver: _CallbackReceiver,
    ) -> None:
        message_id, started = self._post_message(inbox, text=text, contact=contact, base_url=base_url)
        stored = Message.objects.select_related("conversation").get(
            inbox=inbox, provider_message_id=message_id
        )
        conversation = stored.conversation
        dashboard_url = (
            f"{base_url.rstrip('/')}/app/accounts/{conversation.account_id}/conversations/{conversation.id}/"
        )
        self.stdout.write(
            f"conversation #{conversation.id}: {conversation.get_status_display()}\n  customer: {text}"
        )

        job = job_get(message_id=stored.id)
        if job is None:
            # Stored for people only: the conversation was not in the AI's hands when the message arrived.
            raise CommandError(self._with_people(conversation, contact, dashboard_url))

        self.stdout.write(f"  waiting for the AI (up to {timeout:.0f} s) ...")
        finished = self._follow(conversation, stored, job, started=started, timeout=timeout)
        elapsed = time.monotonic() - started
        self._print_delivered(receiver, conversation, stored)
        if not finished:
            raise CommandError(self._timed_out(stored, job, timeout))
        self._print_end(conversation, job, contact=contact, dashboard_url=dashboard_url, elapsed=elapsed)

    def _post_message(self, inbox: Inbox, *, text: str, contact: str, base_url: str) -> tuple[str, float]:
        """POST the customer's message to the inbox's webhook, signed as the API channel requires; returns the
        provider message id it was sent with and when it was sent (time.monotonic)."""
        message_id = f"demo-{uuid.uuid4().hex[:12]}"
        body = json.dumps(
            {"message_id": message_id, "contact": {"id": contact, "name": contact}, "text": text}
        )
        url = f"{base_url.rstrip('/')}/webhooks/api/{inbox.webhook_token}/"
        started = time.monotonic()
        try:
            response = httpx.post(
                url,
                content=body,
                headers={"Content-Type": "application/json", **signed_headers(inbox.secret, body.encode())},
                timeout=30.0,
            )
        except httpx.HTTPError as exc:
            raise CommandError(
                f"Could not reach {url} ({exc}): is the web server running (scripts/run)?"
            ) from exc
        self.stdout.write(
            f"POST {url} -> {response.status_code} in {(time.monotonic() - started) * 1000:.0f} ms"
        )
        if response.status_code != 200:
            raise CommandError(response.text)
        return message_id, started

    def _follow(
        self, conversation: Conversation, stored: Message, job: ReplyJob, *, started: float, timeout: float
    ) -> bool:
        """Print the conversation's new messages as they appear, until the AI's job is no longer pending and
        nothing is queued for delivery (True) or `timeout` has passed (False)."""
        seen = set(
            Message.objects.filter(conversation_id=conversation.id, id__lte=stored.id).values_list(
                "id", flat=True
            )
        )
        deadline = time.monotonic() + timeout
        while True:
            for message in Message.objects.filter(conversation_id=conversation.id).exclude(id__in=seen):
                seen.add(message.id)
                self.stdout.write(f"  {self._describe(message)}  (+{time.monotonic() - started:.1f} s)")
            job.refresh_from_db(fields=["status", "attempts"])
            queued = deliveries_queued(conversation_id=conversation.id)
            if job.status != ReplyJob.Status.PENDING and not queued:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SECONDS)

    def _print_delivered(
        self, receiver: _CallbackReceiver, conversation: Conversation, stored: Message
    ) -> None:
        """What reached the customer's callback, then the run that answered (printed on a timeout too)."""
        for event in receiver.events:
            sender = event.get("sender") or {}
            self.stdout.write(
                f"  delivered to callback: [{sender.get('name') or sender.get('type')}] {event.get('text', '')}"
            )
        run = (
            Run.objects.filter(conversation_id=conversation.id, trigger_message_id__gte=stored.id)
            .order_by("id")
            .first()
        )
        if run is not None:
            self.stdout.write(
                f"run #{run.id}: outcome={run.outcome} route={' -> '.join(run.route) or '-'} "
                f"llm_calls={run.llm_calls} tokens={run.input_tokens}+{run.output_tokens} "
                f"credit_used={run.credit_used} {run.duration_ms} ms"
                + (f"\n  reason: {run.detail}" if run.detail else "")
            )

    def _print_end(
        self, conversation: Conversation, job: ReplyJob, *, contact: str, dashboard_url: str, elapsed: float
    ) -> None:
        """Where the conversation stands now, and how to go on with it."""
        conversation.refresh_from_db(fields=["status"])
        if job.status == ReplyJob.Status.SKIPPED:
            raise CommandError(
                f"The AI skipped your message: people took over conversation #{conversation.id} "
                f"(status {conversation.status}) before it answered, so an agent answers from the dashboard "
                f"({dashboard_url}). Omit --contact to start a fresh conversation with the AI."
            )
        self.stdout.write(f"done in {elapsed:.1f} s")
        if conversation.status == Conversation.Status.PENDING:
            self.stdout.write(f"continue this conversation: --contact {contact}")
        elif conversation.status == Conversation.Status.OPEN:
            self.stdout.write(
                f"conversation #{conversation.id} is now with people: further messages from {contact} go to "
                f"the agents ({dashboard_url}), not to the AI. Omit --contact to start fresh."
            )

    @staticmethod
    def _with_people(conversation: Conversation, contact: str, dashboard_url: str) -> str:
        if conversation.status == Conversation.Status.PENDING:
            return (
                f"Conversation #{conversation.id} did not go to the AI (the demo inbox has no assistant): run "
                "`manage.py captain_demo_seed` again."
            )
        reason = conversation.escalation_reason.strip().rstrip(".")
        reason = f" Escalation reason: {reason}." if reason else ""
        return (
            f"Conversation #{conversation.id} of contact {contact} is with people (status "
            f"'{conversation.status}'), so the AI stays quiet and an agent answers from the dashboard: "
            f"{dashboard_url}.{reason} To talk to the AI, run the command without --contact: each run then "
            "starts a fresh conversation with a new contact."
        )

    @staticmethod
    def _timed_out(stored: Message, job: ReplyJob, timeout: float) -> str:
        worker_log = settings.VAR_DIR / "worker.log"
        if job.status != ReplyJob.Status.PENDING:
            return (
                f"The AI has answered, but its reply is still queued for delivery after {timeout:.0f} s: is the "
                f"Celery worker running (scripts/run starts it)? Check {worker_log}."
            )
        if job.attempts:
            return (
                f"The AI run for message #{stored.id} is still going after {timeout:.0f} s (attempt "
                f"{job.attempts}); the model is slow. Its answer will still appear in the dashboard; "
                f"try a longer --timeout, and see {worker_log} for progress."
            )
        return (
            f"No AI run started within {timeout:.0f} s: message #{stored.id} is still `pending` and no worker "
            f"has picked it up. Is the Celery worker running (scripts/run starts it)? Check {worker_log}."
        )

    @staticmethod
    def _describe(message: Message) -> str:
        if message.message_type == Message.Type.ACTIVITY:
            return f"(activity) {message.content}"
        if message.private:
            return f"(private note) {message.content}"
        if message.sender_type == Message.SenderType.ASSISTANT:
            name = message.ai_agent_name or message.ai_agent_key
            return f"AI [{name}]: {message.content}" if name else f"AI: {message.content}"
        if message.message_type == Message.Type.INCOMING:
            return f"customer: {message.content}"
        if message.sender_type == Message.SenderType.SYSTEM:
            return f"(greeting) {message.content}"
        return f"agent: {message.content}"
