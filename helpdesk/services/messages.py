"""Creating messages: customer messages from channels, replies from people and the AI, notes, activities."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from helpdesk.channels.base import InboundContact, InboundMessage, Thread
from helpdesk.channels.registry import channel_for
from helpdesk.conf import ai_responder
from helpdesk.delivery.publish import delivery_enqueue
from helpdesk.models import AutomationEvent, Contact, ContactInbox, Conversation, Inbox, Message

from .activities import message_create_activity
from .assignment import conversation_auto_assign
from .attachments import attachments_create
from .automation import automation_event
from .csat import csat_answer_ingest
from .incoming import incoming_message_create
from .message_extras import conversation_cc_set, message_files_keep, message_html_keep
from .notifications import notify_mentions
from .out_of_office import out_of_office_claim
from .rate_limits import ai_reply_limit_check
from .reply_files import CheckedFile, UploadedFile, reply_files_check, reply_files_store


@dataclass(frozen=True)
class IngestResult:
    message: Message
    created: bool
    """False when the sender re-delivered a message we already stored (a normal event: providers retry)."""


def _contact_inbox_lock_or_create(*, inbox: Inbox, contact: InboundContact) -> ContactInbox:
    """Fetch the contact's row on this inbox, locked, creating contact and row on first sight.

    The row lock serialises concurrent first messages of one contact, so they land in one conversation.
    """
    # Row locks in this project are FOR NO KEY UPDATE on the one row that serialises (here the contact's inbox
    # row; the contact is read, not locked): they exclude each other but not the FOR KEY SHARE locks that
    # PostgreSQL's deferred foreign key checks take at COMMIT. A FOR UPDATE here blocked a worker's COMMIT (its
    # conversation update re-checks the conversation's foreign keys) while we waited for that worker's
    # conversation: a deadlock, answered 500 to the channel.
    found = (
        ContactInbox.objects.select_for_update(no_key=True, of=("self",))
        .select_related("contact")
        .filter(inbox=inbox, source_id=contact.source_id)
        .first()
    )
    if found is not None:
        return found
    try:
        with transaction.atomic():
            new_contact = Contact.objects.create(
                account_id=inbox.account_id, name=contact.name, email=contact.email
            )
            return ContactInbox.objects.create(contact=new_contact, inbox=inbox, source_id=contact.source_id)
    except IntegrityError:
        # Someone else created it between our read and our insert: the unique constraint decided, use theirs.
        return (
            ContactInbox.objects.select_for_update(no_key=True, of=("self",))
            .select_related("contact")
            .get(inbox=inbox, source_id=contact.source_id)
        )


def _conversation_for_incoming(
    *, contact_inbox: ContactInbox, ai_handles: bool, thread: Thread | None = None
) -> tuple[Conversation, bool]:
    # Locked before the message insert, as every other writer of a conversation locks it first; inserting and
    # then updating the row unlocked deadlocked on PostgreSQL with a worker queued for it. Reading under the
    # lock also keeps the status we write back current (an escalation committed a moment ago is not reverted
    # to "AI handling").
    inbox = contact_inbox.inbox
    # The sender's own conversations only: a thread a channel names elsewhere (a forged header) starts a new one.
    own = Conversation.objects.select_for_update(no_key=True).filter(contact_inbox=contact_inbox)
    if thread is not None:
        # The channel threads by itself (e-mail): the conversation it proved, or a new one.
        own = own.filter(id=thread.conversation_id) if thread.conversation_id else own.none()
    conversation = own.exclude(status=Conversation.Status.RESOLVED).order_by("-id").first()
    if conversation is not None:
        if conversation.status == Conversation.Status.SNOOZED:
            # The customer's message wakes a snoozed conversation before its time.
            conversation.status = Conversation.Status.OPEN
            conversation.snoozed_until = None
            message_create_activity(
                conversation=conversation, content="The customer's message woke the conversation."
            )
        return conversation, False
    if inbox.after_resolution == Inbox.AfterResolution.REOPEN:
        # One conversation per customer on this inbox: their next message reopens the last one.
        last = own.order_by("-id").first()
        if last is not None:
            last.status = Conversation.Status.PENDING if ai_handles else Conversation.Status.OPEN
            last.resolved_at = None
            last.resolved_by = ""
            last.ai_agent_key = ""
            last.save(update_fields=["status", "resolved_at", "resolved_by", "ai_agent_key"])
            message_create_activity(
                conversation=last, content="The customer wrote again: the resolved conversation was reopened."
            )
            return last, False
    conversation = Conversation.objects.create(
        account_id=inbox.account_id,
        inbox=inbox,
        contact=contact_inbox.contact,
        contact_inbox=contact_inbox,
        status=Conversation.Status.PENDING if ai_handles else Conversation.Status.OPEN,
    )
    return conversation, True


def _thread_target(*, inbox: Inbox, inbound: InboundMessage) -> tuple[Inbox, InboundMessage]:
    """Where a message is stored: its own inbox, or the inbox of another of the account's conversations its
    channel threaded it into (an e-mail reply to a widget chat's follow-up mail, Thread.inbox_id). That is
    followed only while the contact there still has the sender's e-mail; otherwise a new conversation here."""
    thread = inbound.thread
    if thread is None or thread.inbox_id is None or thread.inbox_id == inbox.id:
        return inbox, inbound
    target = Inbox.objects.filter(id=thread.inbox_id, account_id=inbox.account_id).first()
    sender = inbound.contact.email
    if (
        target is None
        or not sender
        or not ContactInbox.objects.filter(
            inbox=target, source_id=thread.source_id, contact__email__iexact=sender
        ).exists()
    ):
        return inbox, replace(inbound, thread=Thread(conversation_id=None))
    return target, replace(
        inbound,
        contact=InboundContact(source_id=thread.source_id),
        thread=Thread(conversation_id=thread.conversation_id, how=thread.how),
    )


@transaction.atomic
def message_ingest(*, inbox: Inbox, inbound: InboundMessage) -> IngestResult:
    """Store a customer message exactly once and, after commit, hand it to the AI if the AI is in charge.

    Duplicates are decided by the unique (inbox, provider message id) constraint, never by a prior check alone.
    """
    # The inbox the message arrived at sets the AI reply limit (helpdesk.services.rate_limits): an e-mail answer
    # threaded into a chat is still mail, and an unmarked auto-responder there must not loop with the AI.
    arrived_at = inbox
    inbox, inbound = _thread_target(inbox=inbox, inbound=inbound)
    existing = Message.objects.filter(inbox=inbox, provider_message_id=inbound.provider_message_id).first()
    if existing is not None:
        return IngestResult(message=existing, created=False)

    responder = ai_responder()
    # A bounce or an auto-reply is kept for people, never answered by the AI: two robots would answer each other.
    ai_handles = bool(responder and responder.handles_inbox(inbox)) and not inbound.automated
    contact_inbox = _contact_inbox_lock_or_create(inbox=inbox, contact=inbound.contact)
    # A rating (or its comment) stays in the resolved conversation it answers: no reopening, no AI.
    if (rated := csat_answer_ingest(contact_inbox=contact_inbox, inbound=inbound)) is not None:
        return IngestResult(message=rated.message, created=rated.created)
    conversation, new_conversation = _conversation_for_incoming(
        contact_inbox=contact_inbox, ai_handles=ai_handles, thread=inbound.thread
    )
    for_ai = ai_handles and conversation.status == Conversation.Status.PENDING
    content = inbound.text
    if inbound.attachments:
        links = "\n".join(a.get("url", "") for a in inbound.attachments if a.get("url"))
        content = f"{content}\n{links}".strip()
    message, created = incoming_message_create(
        conversation=conversation, contact_inbox=contact_inbox, inbound=inbound, content=content
    )
    if not created:
        return IngestResult(message=message, created=False)
    if for_ai and not ai_reply_limit_check(inbox=arrived_at, contact_id=contact_inbox.contact_id).allowed:
        for_ai = False
        _leave_for_people(conversation)
    # The files it reports are fetched after commit; their rows commit with the message.
    attachments_create(message=message, reported=inbound.attachments)
    message_html_keep(message=message, html=inbound.display_html)
    message_files_keep(message=message, files=inbound.files)
    conversation_cc_set(conversation=conversation, cc=inbound.cc)
    if for_ai:
        # In this transaction: the AI's job (captain's table) commits with the message or not at all.
        responder.message_stored(message)
    conversation.last_activity_at = timezone.now()
    if conversation.status == Conversation.Status.OPEN and conversation.waiting_since is None:
        conversation.waiting_since = message.created_at
    if new_conversation and inbound.subject:
        conversation.subject = inbound.subject[:255]
    conversation.save(
        update_fields=[
            "status",
            "snoozed_until",
            "last_activity_at",
            "waiting_since",
            "subject",
            "custom_attributes",
        ]
    )
    if new_conversation and conversation.status == Conversation.Status.OPEN:
        # A new conversation no AI answers needs a person now: the inbox's round-robin, when it has one.
        conversation_auto_assign(conversation=conversation)
    if new_conversation and inbox.greeting_message.strip():
        message_create_greeting(conversation=conversation, content=inbox.greeting_message)
    # People have it: outside business hours the customer is told when they will reply (once a night). The
    # widget shows its away message on the page already (and mails answers to away questions, not notices).
    people_have_it = not for_ai and not inbound.automated and conversation.status == Conversation.Status.OPEN
    shows_its_own = channel_for(inbox).shows_away_message
    if people_have_it and not shows_its_own and (away := out_of_office_claim(conversation=conversation)):
        message_create_system(conversation=conversation, content=away)
    if for_ai:
        message_id = message.id
        transaction.on_commit(lambda: responder.message_received(message_id))
    if new_conversation:
        automation_event(event=AutomationEvent.CONVERSATION_CREATED, conversation_id=conversation.pk)
    automation_event(
        event=AutomationEvent.MESSAGE_CREATED, conversation_id=conversation.pk, message_id=message.pk
    )
    return IngestResult(message=message, created=True)


def _leave_for_people(conversation: Conversation) -> None:
    """The contact had as many AI replies this hour as the inbox allows (helpdesk.services.rate_limits): the
    message waits for a person, and the team sees why."""
    conversation.status = Conversation.Status.OPEN
    message_create_activity(
        conversation=conversation,
        content="The AI answered this contact as often as the inbox allows in an hour: this message waits for "
        "a person.",
    )


def message_create_greeting(*, conversation: Conversation, content: str) -> Message:
    """The inbox's greeting, sent once when a customer starts a conversation. Costs no credit."""
    return message_create_system(conversation=conversation, content=content)


def message_create_system(*, conversation: Conversation, content: str) -> Message:
    """A built-in text the customer reads (greeting, out-of-office), sent by the inbox itself. Costs no credit."""
    message = Message.objects.create(
        account_id=conversation.account_id,
        inbox_id=conversation.inbox_id,
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.SYSTEM,
        content=content,
    )
    delivery_enqueue(message=message)
    return message


def message_create_note(
    *, conversation: Conversation, content: str, user: User | None = None, files: Sequence[UploadedFile] = ()
) -> Message:
    """A private note: visible to people only. `user` None means the AI wrote it. People it @mentions are
    notified. `files` are checked first (helpdesk.services.reply_files): one refused (FileRefused) and nothing
    is stored; note and files are written in one transaction."""
    if not files:
        return _note_create(conversation=conversation, content=content, user=user, checked=[])
    checked = reply_files_check(inbox=conversation.inbox, files=files, private=True)
    with transaction.atomic():
        return _note_create(conversation=conversation, content=content, user=user, checked=checked)


def _note_create(
    *, conversation: Conversation, content: str, user: User | None, checked: Sequence[CheckedFile]
) -> Message:
    note = Message.objects.create(
        account_id=conversation.account_id,
        inbox_id=conversation.inbox_id,
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        private=True,
        sender_type=Message.SenderType.USER if user else Message.SenderType.ASSISTANT,
        sender_user=user,
        content=content,
    )
    reply_files_store(message=note, files=checked)
    if user is not None:
        notify_mentions(note=note, author=user)
    return note


def _touch(conversation: Conversation, *fields: str, answer: bool = True) -> None:
    conversation.last_activity_at = timezone.now()
    if answer and conversation.first_reply_at is None:
        # The first public answer (a person's or the AI's reply) is the reports' first response.
        conversation.first_reply_at = conversation.last_activity_at
        fields = (*fields, "first_reply_at")
    conversation.save(update_fields=["last_activity_at", *fields])


@transaction.atomic
def message_create_agent_reply(
    *, conversation: Conversation, user: User, content: str, files: Sequence[UploadedFile] = ()
) -> Message:
    """A person's public reply. On a conversation the AI was handling, people take over and the AI stays quiet.
    `files` are checked against the channel's limits first (helpdesk.services.reply_files): one refused
    (FileRefused) and nothing is stored or sent; they are sent with the text by the delivery."""
    checked = reply_files_check(inbox=conversation.inbox, files=files, private=False) if files else []
    conversation = Conversation.objects.select_for_update(no_key=True).get(pk=conversation.pk)
    message = Message.objects.create(
        account_id=conversation.account_id,
        inbox_id=conversation.inbox_id,
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.USER,
        sender_user=user,
        content=content,
    )
    reply_files_store(message=message, files=checked)
    taken: tuple[str, ...] = ()
    if conversation.status == Conversation.Status.PENDING:
        # Answering takes the conversation over, as "Take over" does: it is the person's own (assigned to them
        # when nobody is), out of "Needs people" while they hold it.
        conversation.status = Conversation.Status.OPEN
        conversation.taken_at = timezone.now()
        conversation.assignee_id = conversation.assignee_id or user.pk
        taken = ("taken_at", "assignee")
        message_create_activity(conversation=conversation, content=f"{user} took over from the AI.")
        ai_taken_over(conversation=conversation)
    conversation.waiting_since = None
    _touch(conversation, "status", "waiting_since", *taken)
    delivery_enqueue(message=message)
    automation_event(
        event=AutomationEvent.MESSAGE_CREATED, conversation_id=conversation.pk, message_id=message.pk
    )
    return message


def ai_taken_over(*, conversation: Conversation) -> None:
    """Tell the AI responder that a person took the conversation over from it (a reply or "take over" while the
    AI was handling it), inside the caller's transaction. Optional: a responder without the hook is not told."""
    hook = getattr(ai_responder(), "conversation_taken_over", None)
    if hook is not None:
        hook(conversation_id=conversation.pk)


def message_create_ai_reply(
    *, conversation: Conversation, content: str, agent_key: str, agent_name: str, answer: bool = True
) -> Message:
    """An AI reply, queued for delivery on commit. The caller owns the transaction (credits are written in it).
    `answer=False` for a notice that answers nothing (the handoff message): it is not a first response."""
    message = Message.objects.create(
        account_id=conversation.account_id,
        inbox_id=conversation.inbox_id,
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.ASSISTANT,
        ai_agent_key=agent_key,
        ai_agent_name=agent_name,
        content=content,
    )
    _touch(conversation, answer=answer)
    delivery_enqueue(message=message)
    automation_event(
        event=AutomationEvent.MESSAGE_CREATED, conversation_id=conversation.pk, message_id=message.pk
    )
    return message
