"""Customer satisfaction: the rating request after resolution and the customer's answer.

The request: when a conversation of an inbox with `csat_survey_enabled` is resolved, the customer gets ONE
outgoing system message (no credit: it is not an AI reply) with the inbox's `csat_message` or a built-in
question in the inbox's language, sent through the outbox like any reply. Its quick replies are "1".."5", which each channel draws as its
native rating form (helpdesk.channels.rating). A conversation is asked once, however often it is resolved.

The answer (`csat_answer_ingest`, called by `message_ingest` before it picks a conversation): while the request
of the contact's LAST conversation on this inbox is open (that conversation still resolved, asked less than
`ANSWER_WINDOW` ago),
- a message that is only a rating ("4", "4/5", "4 stars", "⭐⭐⭐⭐", or a tap on a native button, which arrives as
  the digit) records it, or changes it when given again;
- the first other text within `COMMENT_WINDOW` after the rating is its comment.
Such a message is stored as an incoming message of THAT conversation; it does not reopen it, does not start a new
one, and the AI does not answer it. The customer gets one thank-you asking whether they want to add anything,
and one thank-you for a comment. Every other message takes the normal path (the inbox's reopen / new policy).
A provider's retry is a duplicate before this is reached (message_ingest's provider-id check), and a concurrent
one loses on the unique (inbox, provider message id) constraint here.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from helpdesk.channels import rating
from helpdesk.channels.base import InboundMessage
from helpdesk.channels.registry import channel_for
from helpdesk.delivery.publish import delivery_enqueue
from helpdesk.models import ContactInbox, Conversation, CsatResponse, Inbox, Message

from .activities import message_create_activity
from .incoming import incoming_message_create
from .languages import in_inbox_language

logger = logging.getLogger(__name__)

# Built-in texts the customer reads, in the inbox's language (Inbox.language; locale/ holds the translations).
DEFAULT_QUESTION = _(
    "How would you rate the help you got? Reply with a number from 1 (poor) to 5 (excellent)."
)
THANKS_ASK_COMMENT = _("Thank you for your rating! Anything you would like to add? Just reply here.")
THANKS_FOR_COMMENT = _("Thank you, we have passed your comment on to the team.")
ANSWER_WINDOW = timedelta(days=7)
"""How long after the request a rating is still taken."""
COMMENT_WINDOW = timedelta(minutes=15)
"""How long after the rating the customer's next text is read as its comment (and not as a new question)."""
MAX_COMMENT_CHARS = 5000

# "4", "4/5", "4 / 5", "4 stars", "4 ⭐", "4!" ... and nothing else: "2 questions about my order" is not a rating.
_NUMBER = re.compile(r"^([1-5])\s*(?:/\s*5|stars?|[⭐★]+)?\s*[.!]*$", re.IGNORECASE)
_STARS = re.compile(r"^[⭐★]{1,5}$")


@dataclass(frozen=True)
class CsatAnswer:
    message: Message
    """The customer's message, stored in the rated conversation."""
    created: bool
    """False when a concurrent delivery of the same provider message stored it first."""


def rating_in(text: str) -> int | None:
    """The rating a message gives when it is nothing but a rating, else None."""
    compact = text.replace("\ufe0f", "").strip()  # the emoji variation selector some keyboards add to ⭐
    if _STARS.match(compact):
        return len(compact)
    match = _NUMBER.match(compact)
    return int(match.group(1)) if match else None


def _system_message(
    conversation: Conversation, content: str, *, quick_replies: list[str] | None = None
) -> Message:
    """An outgoing message from the helpdesk itself (not the AI: no credit), queued for delivery on commit."""
    message = Message.objects.create(
        account_id=conversation.account_id,
        inbox_id=conversation.inbox_id,
        conversation=conversation,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.SYSTEM,
        content=content,
        quick_replies=quick_replies or [],
    )
    delivery_enqueue(message=message)
    return message


@transaction.atomic
def csat_request_after_resolution(*, conversation_id: int) -> Message | None:
    """Ask the customer of a just-resolved conversation for a rating, when its inbox asks and it was not asked
    before. Called after the resolution's commit; the conversation may have been reopened since (then nothing).
    Returns the queued request, or None."""
    conversation = (
        Conversation.objects.select_for_update(no_key=True, of=("self",))
        .select_related("inbox")
        .filter(pk=conversation_id)
        .first()
    )
    if (
        conversation is None
        or conversation.status != Conversation.Status.RESOLVED
        or not conversation.inbox.csat_survey_enabled
        or conversation.csat_requested_at is not None
        or CsatResponse.objects.filter(conversation=conversation).exists()
        # Nobody to ask: a conversation the customer never wrote in (an agent-started one, say).
        or not Message.objects.filter(conversation=conversation, message_type=Message.Type.INCOMING).exists()
    ):
        return None
    question = conversation.inbox.csat_message.strip() or in_inbox_language(
        conversation.inbox, DEFAULT_QUESTION
    )
    request = _system_message(conversation, question, quick_replies=list(rating.RATING_CHOICES))
    conversation.csat_requested_at = request.created_at
    conversation.save(update_fields=["csat_requested_at"])
    message_create_activity(
        conversation=conversation, content="The customer was asked to rate the conversation."
    )
    return request


def _answer_button_tap(inbox: Inbox, inbound: InboundMessage, *, stars: str) -> None:
    """A tap on a native rating button the provider waits to have acknowledged (a spinner on Telegram's
    inline button) is answered after commit; any other message needs nothing."""
    if not inbound.callback_id:
        return
    callback_id = inbound.callback_id

    def answer() -> None:
        try:
            channel_for(inbox).answer_callback(inbox, callback_id, text=stars)
        except Exception:  # best effort: the rating is stored whatever the provider says
            logger.warning("answering the button tap failed for inbox %s", inbox.pk, exc_info=True)

    transaction.on_commit(answer)


def csat_answer_ingest(*, contact_inbox: ContactInbox, inbound: InboundMessage) -> CsatAnswer | None:
    """Store `inbound` as the answer to an open rating request of the contact's last conversation, or return None
    (the message takes the normal path). Runs in message_ingest's transaction, under its lock on `contact_inbox`."""
    inbox = contact_inbox.inbox
    choice = rating_in(inbound.text)
    _answer_button_tap(inbox, inbound, stars=rating.stars(str(choice)) if choice else "")
    last = (
        Conversation.objects.filter(contact_inbox=contact_inbox)
        .order_by("-id")
        .values("pk", "status", "csat_requested_at")
        .first()
    )
    now = timezone.now()
    if (
        last is None
        or last["status"] != Conversation.Status.RESOLVED
        or last["csat_requested_at"] is None
        or now - last["csat_requested_at"] > ANSWER_WINDOW
        or inbound.attachments  # a file is never a rating or a short comment: people should see it
    ):
        return None
    response = CsatResponse.objects.filter(conversation_id=last["pk"]).first()
    is_comment = (
        choice is None
        and response is not None
        and not response.comment
        and now - response.created_at <= COMMENT_WINDOW
    )
    if choice is None and not is_comment:
        return None
    conversation = Conversation.objects.select_for_update(no_key=True).get(pk=last["pk"])
    if conversation.status != Conversation.Status.RESOLVED:
        return None  # reopened a moment ago by someone else: the normal path
    message, created = incoming_message_create(
        conversation=conversation, contact_inbox=contact_inbox, inbound=inbound, content=inbound.text
    )
    if not created:
        return CsatAnswer(message=message, created=False)

    if choice is None:
        assert response is not None  # is_comment
        response.comment = inbound.text.strip()[:MAX_COMMENT_CHARS]
        response.save(update_fields=["comment", "updated_at"])
        message_create_activity(
            conversation=conversation, content="The customer added a comment to their rating."
        )
        _system_message(conversation, in_inbox_language(inbox, THANKS_FOR_COMMENT))
    elif response is None:
        CsatResponse.objects.create(
            account_id=conversation.account_id, conversation=conversation, rating=choice
        )
        message_create_activity(
            conversation=conversation, content=f"The customer rated the conversation {choice}/5."
        )
        _system_message(conversation, in_inbox_language(inbox, THANKS_ASK_COMMENT))
    elif response.rating != choice:
        previous = response.rating
        response.rating = choice
        response.save(update_fields=["rating", "updated_at"])
        message_create_activity(
            conversation=conversation,
            content=f"The customer changed their rating from {previous}/5 to {choice}/5.",
        )
    return CsatAnswer(message=message, created=True)
