"""OpenTelemetry helpers for the helpdesk side: span and attribute names, and trace context for tasks.

Trace context travels to Celery tasks as an explicit `trace_context` argument (a W3C traceparent carrier),
so a worker's spans join the trace of the webhook request that caused them.
"""

from __future__ import annotations

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace

tracer = trace.get_tracer("helpdesk")

SPAN_WEBHOOK = "helpdesk.webhook"
SPAN_DELIVER = "helpdesk.deliver"

ATTR_INBOX_ID = "helpdesk.inbox.id"
ATTR_CHANNEL = "helpdesk.channel"
ATTR_ACCOUNT_ID = "helpdesk.account.id"
ATTR_CONVERSATION_ID = "helpdesk.conversation.id"
ATTR_MESSAGE_ID = "helpdesk.message.id"
ATTR_DUPLICATE = "helpdesk.webhook.duplicate"
ATTR_REJECTED = "helpdesk.webhook.rejected"
ATTR_DELIVERY_STATUS = "helpdesk.delivery.status"
ATTR_DELIVERY_ATTEMPT = "helpdesk.delivery.attempt"


def inject_context() -> dict[str, str]:
    """The current trace context as a small dict that can be passed as a task argument."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def extract_context(carrier: dict[str, str] | None) -> otel_context.Context:
    return propagate.extract(carrier or {})
