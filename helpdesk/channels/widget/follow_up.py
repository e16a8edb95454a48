"""The answer to a question asked outside business hours also goes out by e-mail.

A visitor who writes while the inbox is away (helpdesk.business_hours) is shown the away message and asked
for their e-mail; they have probably left the page by the time the AI or an agent answers. So when the widget
inbox names a follow-up e-mail inbox (`follow_up_inbox`: the id of an e-mail inbox of the same account), every
reply by the AI or an agent to a question written away-hours is also sent over that inbox's SMTP server to the
visitor's e-mail, threaded: each follow-up's `References` names the earlier ones (helpdesk.channels.email.smtp).
The visitor's reply to such a mail comes back into this chat (helpdesk.channels.email.threading), and the answer
to it goes by e-mail too, in or out of business hours.
The widget shows the reply either way; only the mail can fail, and then the delivery says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from helpdesk.business_hours import is_away
from helpdesk.models import Inbox, Message

from ..base import DeliveryResult
from ..email import smtp

if TYPE_CHECKING:
    from datetime import datetime

_ANSWERS = (Message.SenderType.USER, Message.SenderType.ASSISTANT)


def _question(message: Message) -> tuple[datetime, str | None] | None:
    """When the visitor wrote the question `message` answers (their latest message before it), and its
    provider id."""
    return (
        message.conversation.messages.filter(id__lt=message.id, message_type=Message.Type.INCOMING)
        .order_by("-id")
        .values_list("created_at", "provider_message_id")
        .first()
    )


def _by_email(provider_message_id: str | None) -> bool:
    """Whether a visitor's message came by e-mail (a reply to a follow-up mail, threaded back into the chat by
    helpdesk.channels.email.threading): its id is a Message-ID, `<...>`; a widget message's is
    `<visitor source id>/<page id>` (channel.parse_message)."""
    value = provider_message_id or ""
    return value.startswith("<") and value.endswith(">")


def follow_up_by_email(message: Message, *, timeout: float) -> DeliveryResult:
    """Send `message` by e-mail when it answers an away-hours question of a visitor who left an e-mail;
    ok without sending anything otherwise."""
    config = message.inbox.provider_config if isinstance(message.inbox.provider_config, dict) else {}
    via_id = str(config.get("follow_up_inbox") or "")
    # Cheapest first: most widget inboxes have no follow-up, and a greeting or a note is never mailed.
    if not via_id.isdigit() or message.private or message.sender_type not in _ANSWERS:
        return DeliveryResult(ok=True)
    contact = message.conversation.contact
    email = contact.email.strip() if contact is not None else ""
    if not email:
        return DeliveryResult(ok=True)
    question = _question(message)
    # A question that came by e-mail is answered by e-mail whatever the hour: the visitor is in their mailbox.
    if question is None or not (
        is_away(config, question[0], message.inbox.account.time_zone) or _by_email(question[1])
    ):
        return DeliveryResult(ok=True)
    via = Inbox.objects.filter(
        id=int(via_id), account_id=message.account_id, channel_type=Inbox.ChannelType.EMAIL
    ).first()
    if via is None:
        return DeliveryResult(
            ok=False, permanent=True, error="The follow-up inbox is not an e-mail inbox of this account."
        )
    return smtp.send(message, timeout=timeout, via=via, to=email)
