"""Notifications for people: a new escalation, a conversation assigned to them, a mention in a note.

Called by the writers (helpdesk.services.conversations, helpdesk.services.messages) inside their transaction:
the rows are written with the change, so a rolled back escalation notifies nobody. What leaves the database
(the live push on the account's event channel, the e-mail) waits for the commit, and an e-mail that cannot be
sent is logged, never raised: a broken SMTP server must not undo an escalation.

Who is told:
- escalation: the person it was assigned to automatically (kind `assigned`); else (kind `escalation`) the
  members of the conversation's team who are still in the account; else (no team, or none of its members left)
  the members of the conversation's inbox still in the account (helpdesk.models.InboxMember); else the account's
  administrators; never everyone. Who keeps `Membership.escalation_notifications` off is not told of
  escalations (assignments and mentions still reach them), and the person who handed the conversation over is
  never told. The muting is applied after the step is chosen: a team whose members all muted escalations tells
  nobody rather than passing them on to the inbox or the administrators.
- assigned: the new assignee, unless they assigned themselves.
- mention: each member of the account named `@username` in a private note, never its author.

In the app everyone chosen is told whatever their availability: an offline person finds it in the bell when
they come back. E-mail goes to those who keep `Membership.email_notifications` on and have an address, and
never to the person who caused it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import EmailMessage, get_connection
from django.db import transaction
from django.db.models.functions import Lower
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from helpdesk.models import Conversation, InboxMember, Membership, Message, Notification, TeamMember
from helpdesk.realtime.publish import publish_after_commit

from .languages import in_server_language

logger = logging.getLogger(__name__)

TEXT_MAX = 300  # Notification.text
MENTION = re.compile(r"(?<![\w.+@-])@([\w.+-]+)")
"""`@username` (Django's username characters but `@`), not preceded by a word character: the `@` inside an
e-mail address such as bob@example.com is no mention."""


@dataclass(frozen=True)
class _Email:
    user_id: int
    to: str
    subject: str
    body: str


def conversation_path(*, account_id: int, conversation_id: int) -> str:
    return reverse("dashboard:conversation-detail", args=[account_id, conversation_id])


def _customer(conversation: Conversation) -> str:
    name = str(conversation.contact).strip() if conversation.contact_id else ""
    return name or "a customer"


def _notify(
    *,
    conversation: Conversation,
    kind: str,
    text: str,
    recipients: Sequence[User],
    actor: User | None,
) -> list[Notification]:
    """One row per recipient, its live push and (after commit) its e-mail."""
    if not recipients:
        return []
    text = text[:TEXT_MAX]
    account_id = conversation.account_id
    url = conversation_path(account_id=account_id, conversation_id=conversation.pk)
    created = Notification.objects.bulk_create(
        [
            Notification(account_id=account_id, user=user, kind=kind, conversation=conversation, text=text)
            for user in recipients
        ]
    )
    for notification, user in zip(created, recipients, strict=True):
        publish_after_commit(
            account_id,
            {
                "type": "notification",
                "user_id": user.pk,
                "id": notification.pk,
                "kind": kind,
                "text": text,
                "url": url,
            },
        )
    emails = _emails_for(
        conversation=conversation, kind=kind, text=text, url=url, recipients=recipients, actor=actor
    )
    if emails:
        transaction.on_commit(lambda: send_emails(emails))
    return created


def _emails_for(
    *,
    conversation: Conversation,
    kind: str,
    text: str,
    url: str,
    recipients: Sequence[User],
    actor: User | None,
) -> list[_Email]:
    wanting = set(
        Membership.objects.filter(
            account_id=conversation.account_id,
            user_id__in=[u.pk for u in recipients],
            email_notifications=True,
        ).values_list("user_id", flat=True)
    )
    link = settings.PUBLIC_BASE_URL.rstrip("/") + url
    kind_label = in_server_language(Notification.Kind(kind).label)  # like the stored text
    emails = []
    for user in recipients:
        if user.pk not in wanting or not user.email or (actor is not None and actor.pk == user.pk):
            continue
        context = {"user": user, "text": text, "link": link, "kind": kind_label}
        subject = " ".join(render_to_string("helpdesk/email/notification_subject.txt", context).split())
        body = render_to_string("helpdesk/email/notification_body.txt", context)
        emails.append(_Email(user_id=user.pk, to=user.email, subject=subject, body=body))
    return emails


def send_emails(emails: list[_Email]) -> int:
    """Send through Django's e-mail backend, one connection for the lot; returns how many left. Failures are
    logged (the addressee's user id and the error type, never the address or the content) and never raised."""
    sent = 0
    try:
        connection = get_connection()
        with connection:
            for email in emails:
                try:
                    sent += EmailMessage(
                        subject=email.subject, body=email.body, to=[email.to], connection=connection
                    ).send()
                except Exception as exc:  # any backend error: log and go on with the next one
                    logger.warning(
                        "notification e-mail to user %s not sent: %s", email.user_id, type(exc).__name__
                    )
    except Exception as exc:  # opening the connection failed (SMTP down): nothing is sent
        logger.warning("notification e-mails not sent (%d): %s", len(emails) - sent, type(exc).__name__)
    return sent


def escalation_recipients(*, conversation: Conversation) -> list[User]:
    """Who is told that a conversation waits for people: the members of its team who are still in the account,
    else the members of its inbox who are still in the account, else the account's administrators; without
    those who muted escalations."""
    memberships = Membership.objects.filter(account_id=conversation.account_id, user__is_active=True)
    audience = memberships.none()
    if conversation.team_id is not None:
        team_user_ids = TeamMember.objects.filter(team_id=conversation.team_id).values("user_id")
        audience = memberships.filter(user_id__in=team_user_ids)
    if not audience.exists():
        inbox_user_ids = InboxMember.objects.filter(inbox_id=conversation.inbox_id).values("user_id")
        audience = memberships.filter(user_id__in=inbox_user_ids)
    if not audience.exists():
        audience = memberships.filter(role=Membership.Role.ADMIN)
    wanting = audience.filter(escalation_notifications=True).values("user_id")
    return list(User.objects.filter(pk__in=wanting).order_by("id"))


def notify_escalated(*, conversation: Conversation, assignee: User | None, actor: User | None = None) -> None:
    """`actor`: the person who handed the conversation to people, if one did: never told about it."""
    number = conversation.pk
    customer = _customer(conversation)
    if assignee is not None:
        if actor is not None and actor.pk == assignee.pk:
            return
        _notify(
            conversation=conversation,
            kind=Notification.Kind.ASSIGNED,
            text=f"Conversation #{number} with {customer} was handed to people and assigned to you.",
            recipients=[assignee],
            actor=None,
        )
        return
    _notify(
        conversation=conversation,
        kind=Notification.Kind.ESCALATION,
        text=f"Conversation #{number} with {customer} needs people.",
        recipients=[
            user
            for user in escalation_recipients(conversation=conversation)
            if actor is None or user.pk != actor.pk
        ],
        actor=actor,
    )


def notify_assigned(*, conversation: Conversation, assignee: User, by: User | None) -> None:
    if by is not None and by.pk == assignee.pk:
        return
    who = f"{by.get_username()} assigned" if by is not None else "Assigned"
    _notify(
        conversation=conversation,
        kind=Notification.Kind.ASSIGNED,
        text=f"{who} conversation #{conversation.pk} with {_customer(conversation)} to you.",
        recipients=[assignee],
        actor=by,
    )


def mentioned_usernames(content: str) -> set[str]:
    """Lower-cased `@username`s in a text; a trailing full stop or dash ends a sentence, not the name."""
    names = set()
    for match in MENTION.finditer(content):
        token = match.group(1).lower()
        names.add(token)
        names.add(token.rstrip(".-+"))
    names.discard("")
    return names


def notify_mentions(*, note: Message, author: User) -> None:
    if not note.private:
        return  # only private notes mention colleagues; a reply's "@" is the customer's business
    names = mentioned_usernames(note.content or "")
    if not names:
        return
    people = list(
        User.objects.filter(memberships__account_id=note.account_id, is_active=True)
        .annotate(lower_name=Lower("username"))
        .filter(lower_name__in=names)
        .exclude(pk=author.pk)
        .order_by("id")
    )
    conversation = note.conversation
    _notify(
        conversation=conversation,
        kind=Notification.Kind.MENTION,
        text=f"{author.get_username()} mentioned you in a note on conversation #{conversation.pk} "
        f"with {_customer(conversation)}.",
        recipients=people,
        actor=author,
    )


def notification_mark_read(*, notification: Notification) -> Notification:
    """Mark one read (idempotent: the first reading time is kept)."""
    if notification.read_at is None:
        notification.read_at = timezone.now()
        Notification.objects.filter(pk=notification.pk, read_at__isnull=True).update(
            read_at=notification.read_at
        )
    return notification


def notifications_mark_all_read(*, account_id: int, user_id: int) -> int:
    """Mark all of one person's unread notifications in one account read; returns how many changed."""
    return Notification.objects.filter(account_id=account_id, user_id=user_id, read_at__isnull=True).update(
        read_at=timezone.now()
    )


def membership_set_email_notifications(*, membership: Membership, enabled: bool) -> Membership:
    """One's own choice: also receive this account's notifications by e-mail."""
    if membership.email_notifications != enabled:
        membership.email_notifications = enabled
        membership.save(update_fields=["email_notifications"])
    return membership


def membership_set_escalation_notifications(*, membership: Membership, enabled: bool) -> Membership:
    """One's own choice: be told (or not) when a conversation is handed to people and not assigned to oneself."""
    if membership.escalation_notifications != enabled:
        membership.escalation_notifications = enabled
        membership.save(update_fields=["escalation_notifications"])
    return membership


def notify_sla_breached(*, conversation: Conversation, what: str) -> None:
    """An SLA target was missed: the assignee is told, else whoever is told of escalations."""
    recipients = [conversation.assignee] if conversation.assignee is not None else None
    _notify(
        conversation=conversation,
        kind=Notification.Kind.SLA_BREACH,
        text=f"Conversation #{conversation.pk} with {_customer(conversation)}: {what}",
        recipients=recipients or escalation_recipients(conversation=conversation),
        actor=None,
    )
