"""A customer message arriving while a worker locks the same conversation: no deadlock, no lost status.

Inserting a message takes a KEY SHARE lock on its conversation (the foreign key check). If the ingest then
updates the conversation while a worker waits for FOR UPDATE on it (outcome_apply, an escalation), PostgreSQL
queues the update behind the waiting worker, which waits for the ingest: a deadlock, answered 500 to the channel.
The ingest therefore locks the conversation row first, like every other writer of it.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from captain.answering.models import ReplyJob
from helpdesk.channels.base import InboundContact, InboundMessage
from helpdesk.models import Conversation, Delivery, Inbox, Message
from helpdesk.services.messages import message_ingest
from helpdesk.tasks import message_deliver
from tests.factories import AssistantInboxFactory, MessageFactory
from tests.support.callback_receiver import CallbackReceiver

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_ingest_and_a_worker_locking_the_conversation_do_not_deadlock():
    link = AssistantInboxFactory()
    contact = InboundContact(source_id="ann", name="Ann")
    message_ingest(inbox=link.inbox, inbound=InboundMessage("m-1", contact, "first"))
    conversation = Conversation.objects.get()
    inserted = threading.Event()
    worker_errors: list[BaseException] = []

    def worker() -> None:
        try:
            inserted.wait(10)
            with transaction.atomic():
                locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
                locked.status = Conversation.Status.OPEN  # an escalation decided meanwhile
                locked.save(update_fields=["status"])
        except BaseException as exc:
            worker_errors.append(exc)
        finally:
            connection.close()

    def pause_after_message_insert(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if sql.startswith('INSERT INTO "helpdesk_message"'):
            inserted.set()
            time.sleep(0.5)  # the worker's FOR UPDATE is queued on the conversation by now
        return result

    thread = threading.Thread(target=worker)
    thread.start()
    with connection.execute_wrapper(pause_after_message_insert):
        result = message_ingest(inbox=link.inbox, inbound=InboundMessage("m-2", contact, "second"))
    thread.join(15)

    assert worker_errors == []
    assert result.created
    assert Message.objects.filter(conversation=conversation).count() == 2
    # The escalation committed after the ingest and is not overwritten by a stale status.
    assert Conversation.objects.get(pk=conversation.pk).status == Conversation.Status.OPEN


def test_an_escalation_committed_before_the_ingest_reads_is_kept():
    """The ingest reads the conversation under its lock: a status changed just before is not written back."""
    link = AssistantInboxFactory()
    contact = InboundContact(source_id="bob", name="Bob")
    message_ingest(inbox=link.inbox, inbound=InboundMessage("b-1", contact, "first"))
    conversation = Conversation.objects.get()
    escalated = threading.Event()

    def escalate_while_ingest_waits() -> None:
        try:
            with transaction.atomic():
                locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
                escalated.set()
                time.sleep(0.5)  # the ingest below is waiting for this row now
                locked.status = Conversation.Status.OPEN
                locked.save(update_fields=["status"])
        finally:
            connection.close()

    thread = threading.Thread(target=escalate_while_ingest_waits)
    thread.start()
    escalated.wait(10)
    result = message_ingest(inbox=link.inbox, inbound=InboundMessage("b-2", contact, "second"))
    thread.join(15)

    assert result.created
    assert Conversation.objects.get(pk=conversation.pk).status == Conversation.Status.OPEN
    # With people now: not queued for the AI, so no job row.
    assert not ReplyJob.objects.filter(pk=result.message.pk).exists()


def test_ingest_and_a_delivery_of_the_same_conversation_do_not_deadlock():
    """The delivery task locks only its outbox row; it once also locked the conversation and the contact's
    inbox row in one statement, the reverse of the ingest's order (contact's inbox row, then conversation)."""
    link = AssistantInboxFactory()
    contact = InboundContact(source_id="cyd", name="Cyd")
    message_ingest(inbox=link.inbox, inbound=InboundMessage("c-1", contact, "first"))
    conversation = Conversation.objects.get()
    reply = MessageFactory(
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.ASSISTANT,
        content="An answer",
        delivery=Delivery.Status.QUEUED,
    )
    contact_locked = threading.Event()
    delivery_errors: list[BaseException] = []

    def deliver() -> None:
        try:
            contact_locked.wait(10)
            message_deliver.apply(args=(reply.id,))
        except BaseException as exc:
            delivery_errors.append(exc)
        finally:
            connection.close()

    def pause_after_contact_lock(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if 'FROM "helpdesk_contactinbox"' in sql and "FOR " in sql:
            contact_locked.set()
            time.sleep(0.5)  # the delivery's lock statement runs now
        return result

    with CallbackReceiver() as receiver:
        Inbox.objects.filter(pk=link.inbox.pk).update(callback_url=receiver.url)
        thread = threading.Thread(target=deliver)
        thread.start()
        with connection.execute_wrapper(pause_after_contact_lock):
            result = message_ingest(inbox=link.inbox, inbound=InboundMessage("c-2", contact, "second"))
        thread.join(15)

    assert delivery_errors == []
    assert result.created
    assert Delivery.objects.get(pk=reply.pk).status == Delivery.Status.SENT


def test_ingest_does_not_block_a_worker_commit_that_rechecks_foreign_keys():
    """A worker that updates its conversation twice re-checks the conversation's foreign keys at COMMIT
    (FOR KEY SHARE on the contact's inbox row). The ingest's lock on that row must not block it while the
    ingest waits for the worker's conversation."""
    link = AssistantInboxFactory()
    contact = InboundContact(source_id="dee", name="Dee")
    message_ingest(inbox=link.inbox, inbound=InboundMessage("d-1", contact, "first"))
    conversation = Conversation.objects.get()
    contact_locked = threading.Event()
    worker_errors: list[BaseException] = []

    def worker() -> None:
        try:
            with transaction.atomic():
                Conversation.objects.select_for_update(no_key=True).get(pk=conversation.pk)
                Conversation.objects.filter(pk=conversation.pk).update(ai_agent_key="assistant")
                Conversation.objects.filter(pk=conversation.pk).update(priority="high")
                contact_locked.wait(10)  # COMMIT while the ingest holds the contact's inbox row
        except BaseException as exc:
            worker_errors.append(exc)
        finally:
            connection.close()

    def pause_after_contact_lock(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if 'FROM "helpdesk_contactinbox"' in sql and "FOR " in sql:
            contact_locked.set()
            time.sleep(0.5)  # the worker's COMMIT runs its foreign key checks now
        return result

    thread = threading.Thread(target=worker)
    thread.start()
    time.sleep(0.2)  # the worker holds the conversation first
    with connection.execute_wrapper(pause_after_contact_lock):
        result = message_ingest(inbox=link.inbox, inbound=InboundMessage("d-2", contact, "second"))
    thread.join(15)

    assert worker_errors == []
    assert result.created
    assert Conversation.objects.get(pk=conversation.pk).priority == "high"
