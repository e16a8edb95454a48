"""The Celery task that delivers one outgoing message. It takes an id, never a message body.

Registered under its historical name, `helpdesk.tasks.message_deliver` (helpdesk/tasks.py imports it for the
worker's autodiscovery), so tasks already on the queue across a deploy still find it.
"""

from __future__ import annotations

from celery import Task, shared_task

from helpdesk import tracing

from .send import delivery_send


@shared_task(name="helpdesk.tasks.message_deliver", bind=True, acks_late=True, max_retries=None)
def message_deliver(self: Task, message_id: int, trace_context: dict[str, str] | None = None) -> str:
    """Send one outgoing message through its channel, retrying transient failures with backoff."""
    with tracing.tracer.start_as_current_span(
        tracing.SPAN_DELIVER, context=tracing.extract_context(trace_context)
    ) as span:
        span.set_attribute(tracing.ATTR_MESSAGE_ID, message_id)
        result = delivery_send(message_id=message_id)
        if result.attempt:
            span.set_attribute(tracing.ATTR_DELIVERY_ATTEMPT, result.attempt)
        span.set_attribute(tracing.ATTR_DELIVERY_STATUS, result.status)
        if result.status in ("busy", "retrying"):
            raise self.retry(
                countdown=result.retry_in, kwargs={"message_id": message_id, "trace_context": trace_context}
            )
        return result.status
