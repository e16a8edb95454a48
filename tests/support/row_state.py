"""What fuzz tests compare before and after a request: the rows of every helpdesk and captain table, taken in
one query, and a savepoint that undoes each example so examples cannot see each other's rows."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.apps import apps
from django.db import connection, transaction

from captain.answering.models import ReplyJob
from helpdesk.models import Delivery, Message

# Every helpdesk and captain table except the span store: each authenticated webhook request, a repeated or
# malformed one included, leaves its `helpdesk.webhook` span there (telemetry, `helpdesk.webhook.rejected` naming
# a refusal). Requests refused before authentication store no span (tests/helpdesk/webhooks/
# test_rejected_requests.py holds that).
SPAN_STORE = "captain.SpanRecord"


def _tables() -> list[type]:
    return [
        model
        for label in ("helpdesk", "captain")
        for model in apps.get_app_config(label).get_models()
        if not model._meta.proxy and model._meta.label != SPAN_STORE
    ]


def database_state() -> dict[str, int]:
    """Row counts of every helpdesk and captain table, customer messages, and messages per delivery and AI
    state (what a status notification or a run could change). One query: fuzz tests take it on every example."""
    quote = connection.ops.quote_name
    message = quote(Message._meta.db_table)
    parts = {m._meta.label: f"SELECT COUNT(*) FROM {quote(m._meta.db_table)}" for m in _tables()}
    parts["incoming"] = f"SELECT COUNT(*) FROM {message} WHERE message_type = %s"
    parts["failed"] = f"SELECT COUNT(*) FROM {quote(Delivery._meta.db_table)} WHERE status = %s"
    parts["ai-pending"] = f"SELECT COUNT(*) FROM {quote(ReplyJob._meta.db_table)} WHERE status = %s"
    params = [Message.Type.INCOMING, Delivery.Status.FAILED, ReplyJob.Status.PENDING]
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(f"({sql})" for sql in parts.values()), params)
        row = cursor.fetchone()
    return dict(zip(parts, row, strict=True))


@contextmanager
def rolled_back() -> Iterator[None]:
    """A savepoint undone after the block (an example), so the next one starts from the fixture's rows."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)
