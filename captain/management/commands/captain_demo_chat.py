"""Send a signed customer message to the demo inbox and print the conversation as it unfolds.

Run `scripts/run` in another terminal first (web server, worker, model), then e.g.:
    .venv/bin/python manage.py captain_demo_chat "I want a refund for order 42"
    .venv/bin/python manage.py captain_demo_chat "I want to talk to a person" --contact alice
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from captain.models import Run
from helpdesk.channels.api_channel import signed_headers
from helpdesk.models import Inbox, Message

from .captain_demo_seed import DEMO_WEBHOOK_TOKEN


class _Receiver(BaseHTTPRequestHandler):
    events: list[dict] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.events.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:
        return


class Command(BaseCommand):
    help = "Send a signed customer message to the demo API inbox and print the conversation as it unfolds."

    def add_arguments(self, parser) -> None:
        parser.add_argument("text")
        parser.add_argument(
            "--contact", default="demo-customer", help="The customer's id on the API channel."
        )
        parser.add_argument("--base-url", default=settings.PUBLIC_BASE_URL)
        parser.add_argument("--timeout", type=float, default=180.0)

    def handle(self, *args, text: str, contact: str, base_url: str, timeout: float, **options) -> None:
        inbox = Inbox.objects.filter(webhook_token=DEMO_WEBHOOK_TOKEN).first()
        if inbox is None:
            raise CommandError("No demo inbox: run `manage.py captain_demo_seed` (scripts/run does).")
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        inbox.callback_url = f"http://127.0.0.1:{server.server_address[1]}/callback"
        inbox.save(update_fields=["callback_url"])

        message_id = f"demo-{uuid.uuid4().hex[:12]}"
        body = json.dumps(
            {"message_id": message_id, "contact": {"id": contact, "name": contact}, "text": text}
        )
        url = f"{base_url.rstrip('/')}/webhooks/api/{inbox.webhook_token}/"
        started = time.monotonic()
        response = httpx.post(
            url,
            content=body,
            headers={"Content-Type": "application/json", **signed_headers(inbox.secret, body.encode())},
        )
        self.stdout.write(
            f"POST {url} -> {response.status_code} in {(time.monotonic() - started) * 1000:.0f} ms"
        )
        if response.status_code != 200:
            raise CommandError(response.text)
        stored = Message.objects.get(inbox=inbox, provider_message_id=message_id)
        conversation_id = stored.conversation_id
        self.stdout.write(f"conversation #{conversation_id}\n  customer: {text}")
        seen = set(
            Message.objects.filter(conversation_id=conversation_id, id__lte=stored.id).values_list(
                "id", flat=True
            )
        )
        deadline = time.monotonic() + timeout
        run = None
        while time.monotonic() < deadline:
            for message in Message.objects.filter(conversation_id=conversation_id).exclude(id__in=seen):
                seen.add(message.id)
                self.stdout.write("  " + self._describe(message))
            run = (
                run
                or Run.objects.filter(
                    conversation_id=conversation_id, trigger_message_id__gte=stored.id
                ).first()
            )
            queued = Message.objects.filter(
                conversation_id=conversation_id, delivery_status="queued"
            ).exists()
            if run and not queued:
                break
            time.sleep(0.3)
        for event in _Receiver.events:
            self.stdout.write(
                f"  delivered to callback: [{event['sender'].get('name') or event['sender']['type']}] {event['text']}"
            )
        server.shutdown()
        if run is None:
            raise CommandError(
                f"No AI run finished within {timeout:.0f} s: is the worker running (scripts/run)?"
            )
        self.stdout.write(
            f"run #{run.id}: outcome={run.outcome} route={' -> '.join(run.route) or '-'} llm_calls={run.llm_calls} "
            f"tokens={run.input_tokens}+{run.output_tokens} credit_used={run.credit_used} {run.duration_ms} ms"
            + (f"\n  reason: {run.detail}" if run.detail else "")
        )

    @staticmethod
    def _describe(message: Message) -> str:
        if message.message_type == Message.Type.ACTIVITY:
            return f"(activity) {message.content}"
        if message.private:
            return f"(private note) {message.content}"
        if message.sender_type == Message.SenderType.ASSISTANT:
            return f"AI [{message.ai_agent_name or message.ai_agent_key}]: {message.content}"
        who = "customer" if message.message_type == Message.Type.INCOMING else "agent"
        return f"{who}: {message.content}"
