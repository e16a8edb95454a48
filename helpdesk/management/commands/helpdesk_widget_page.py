"""Serve the demo's local test page: a shop page on its own origin with the website widget on it."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from helpdesk.channels.widget.demo_page import DemoPage
from helpdesk.models import Inbox


class Command(BaseCommand):
    help = "Serve a shop page with the website widget on 127.0.0.1 (the demo's widget inbox must allow its origin)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=8090, help="Port of the shop page (default 8090).")
        parser.add_argument("--helpdesk", default="http://127.0.0.1:8000", help="Where the helpdesk runs.")
        parser.add_argument(
            "--inbox", default="", help="Website token of the widget inbox (default: the first)."
        )

    def handle(self, *args: Any, port: int, helpdesk: str, inbox: str, **options: Any) -> None:
        widgets = Inbox.objects.filter(channel_type=Inbox.ChannelType.WIDGET).order_by("id")
        found = widgets.filter(webhook_token=inbox).first() if inbox else widgets.first()
        if found is None:
            raise CommandError(
                "No widget inbox: run the demo seed (scripts/run does) or add one in the admin."
            )
        page = DemoPage(helpdesk=helpdesk, website_token=found.webhook_token, port=port).start()
        self.stdout.write(f"Shop page with the widget of '{found.name}': {page.origin}/  (Ctrl+C stops it)")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            page.stop()
