"""The migrations that move captain's job state and helpdesk's outbox off `helpdesk.Message` lose nothing.

A database at the migrations before the move holds pending AI messages and in-flight (and finished)
deliveries, written with the historical models; migrating forward must carry every one, field by field, to
`captain.ReplyJob` and `helpdesk.Delivery` before the old columns are dropped.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from captain.answering.models import ReplyJob
from helpdesk.models import Delivery

BEFORE = [
    ("helpdesk", "0005_alter_contactinbox_options_alter_inbox_options"),
    ("captain", "0005_playground_runs"),
]

pytestmark = pytest.mark.django_db(transaction=True)


def _executor() -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    return executor


def test_pending_ai_messages_and_in_flight_deliveries_survive_the_move():
    executor = _executor()
    executor.migrate(BEFORE)
    old = _executor().loader.project_state(BEFORE).apps
    Account, Inbox = old.get_model("helpdesk", "Account"), old.get_model("helpdesk", "Inbox")
    Contact, ContactInbox = old.get_model("helpdesk", "Contact"), old.get_model("helpdesk", "ContactInbox")
    Conversation, Message = old.get_model("helpdesk", "Conversation"), old.get_model("helpdesk", "Message")

    account = Account.objects.create(name="Acme")
    inbox = Inbox.objects.create(account=account, name="API", webhook_token="tok", secret="s")
    contact = Contact.objects.create(account=account, name="Ann")
    contact_inbox = ContactInbox.objects.create(contact=contact, inbox=inbox, source_id="ann")
    conversation = Conversation.objects.create(
        account=account, inbox=inbox, contact=contact, contact_inbox=contact_inbox
    )
    now = timezone.now().replace(microsecond=0)

    def message(**fields):
        return Message.objects.create(
            account=account, inbox=inbox, conversation=conversation, sender_type="contact", **fields
        )

    jobs = {
        # Published and retried twice (a poison candidate), never published (broker down), answered, skipped.
        message(message_type="incoming", ai_status="pending", ai_attempts=2, ai_enqueued_at=now).pk: (
            "pending",
            2,
            now,
        ),
        message(message_type="incoming", ai_status="pending").pk: ("pending", 0, None),
        message(message_type="incoming", ai_status="done", ai_attempts=1, ai_enqueued_at=now).pk: (
            "done",
            1,
            now,
        ),
        message(message_type="incoming", ai_status="skipped", ai_attempts=1).pk: ("skipped", 1, None),
    }
    not_for_ai = message(message_type="incoming", ai_status="none")
    lease = now + timedelta(seconds=70)
    deliveries = {
        # Being sent right now (lease held, first part accepted), waiting for a retry, never published, sent
        # (its provider id answers later status webhooks), failed for good.
        message(
            message_type="outgoing",
            delivery_status="queued",
            delivery_attempts=1,
            delivery_lease_until=lease,
            delivery_enqueued_at=now,
            delivery_provider_id="p-1",
            delivery_error="",
        ).pk: ("queued", 1, lease, now, "p-1", ""),
        message(
            message_type="outgoing",
            delivery_status="queued",
            delivery_attempts=3,
            delivery_enqueued_at=now,
            delivery_error="callback answered HTTP 503",
        ).pk: ("queued", 3, None, now, "", "callback answered HTTP 503"),
        message(message_type="outgoing", delivery_status="queued").pk: ("queued", 0, None, None, "", ""),
        message(
            message_type="outgoing",
            delivery_status="sent",
            delivery_attempts=1,
            delivery_enqueued_at=now,
            delivery_provider_id="wamid.1,wamid.2",
        ).pk: ("sent", 1, None, now, "wamid.1,wamid.2", ""),
        message(
            message_type="outgoing",
            delivery_status="failed",
            delivery_attempts=6,
            delivery_error="HTTP 410",
        ).pk: ("failed", 6, None, None, "", "HTTP 410"),
    }
    note = message(message_type="outgoing", private=True)
    created = dict(Message.objects.values_list("pk", "created_at"))

    executor = _executor()
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert {job.pk: (job.status, job.attempts, job.enqueued_at) for job in ReplyJob.objects.all()} == jobs
    for job in ReplyJob.objects.all():
        assert (job.conversation_id, job.account_id, job.created_at) == (
            conversation.pk,
            account.pk,
            created[job.pk],
        )
    assert {
        d.pk: (d.status, d.attempts, d.lease_until, d.enqueued_at, d.provider_message_id, d.error)
        for d in Delivery.objects.all()
    } == deliveries
    for delivery in Delivery.objects.all():
        assert delivery.created_at == created[delivery.pk]
    # Messages that had no AI work and no outbox state get no rows.
    assert not ReplyJob.objects.filter(pk=not_for_ai.pk).exists()
    assert not Delivery.objects.filter(pk__in=[note.pk, not_for_ai.pk]).exists()


def test_captains_copy_runs_before_helpdesk_drops_the_columns():
    """The cross-app order the data migration relies on, whatever else is added to either app later."""
    plan = _executor().loader.graph
    drop = ("helpdesk", "0008_remove_message_outbox_and_ai_columns")
    assert ("captain", "0007_reply_job_data") in plan.forwards_plan(drop)
    assert ("helpdesk", "0007_delivery_data") in plan.forwards_plan(drop)
