"""Which conversation a customer's mail continues: by its headers first, by a signed reply address second.

1. Headers: `In-Reply-To`, then `References` newest first. An id counts when it is one of our replies
   (`<helpdesk-reply-<message id>@...>`, helpdesk.channels.email.smtp) or a mail we stored, in a conversation of
   the *sender's* in this inbox. Gmail, Outlook and Apple Mail all send both headers on a reply.
2. The reply address: every reply we send carries `Reply-To: support+c<conversation id>-<signature>@domain`. The
   signature is an HMAC of the inbox and the conversation under the server's SECRET_KEY, so a token cannot be
   guessed, nor moved to another conversation or another inbox (another tenant). It threads a reply whose client
   dropped the headers (some web mailers, a reply typed as a new mail to the reply address).
3. Anything else (a new mail, a forwarded mail, an unknown or forged id or token) starts a new conversation.

Only the sender's own conversations are ever matched: knowing someone else's Message-ID or token proves nothing
about the sender, and helpdesk.services.messages checks the same again under its lock. One kind lies outside this
inbox: a widget chat whose away-hours answers this inbox mailed (`followed_conversations`). A reply to such a mail
(by its headers or the reply address, as above) returns to that chat when the sender is the e-mail its visitor
left; the Thread then names the chat's inbox and visitor, and the message is stored there.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Iterable

from django.db.models import Q, QuerySet
from django.utils.crypto import salted_hmac

from helpdesk.models import Conversation, Inbox, Message

from ..base import Thread
from .mime import ParsedMail

_SALT = "helpdesk.channels.email.reply-token"
_SIGNATURE_LENGTH = 24  # hex digits: 96 bits, far beyond guessing; keeps the address under 64 characters
_OUR_REPLY = re.compile(r"^<helpdesk-reply-(\d{1,18})@[^<>\s]+>$")
_TOKEN = re.compile(rf"\+c(\d{{1,18}})-([0-9a-f]{{{_SIGNATURE_LENGTH}}})@")


def _signature(inbox_id: int, conversation_id: int) -> str:
    return salted_hmac(_SALT, f"{inbox_id}:{conversation_id}", algorithm="sha256").hexdigest()[
        :_SIGNATURE_LENGTH
    ]


def reply_address(from_address: str, *, inbox_id: int, conversation_id: int) -> str:
    """`local+c<id>-<signature>@domain` for a reply in `conversation_id`; "" for a From address without '@'."""
    local, at, domain = from_address.partition("@")
    if not (at and local and domain):
        return ""
    local = local.split("+", 1)[0]  # a From address that is itself a plus address keeps one token only
    return f"{local}+c{conversation_id}-{_signature(inbox_id, conversation_id)}@{domain}"


def token_conversation(inbox_id: int, addresses: Iterable[str]) -> int | None:
    """The conversation a signed reply address among `addresses` names; None when none carries a valid one."""
    for address in addresses:
        match = _TOKEN.search(address.lower())
        if match is None:
            continue
        conversation_id = int(match.group(1))
        if hmac.compare_digest(match.group(2), _signature(inbox_id, conversation_id)):
            return conversation_id
    return None


def _header_ids(mail: ParsedMail) -> list[str]:
    """In-Reply-To first, then References newest first: the closest ancestor wins."""
    ids = [mail.in_reply_to] if mail.in_reply_to else []
    ids += [ref for ref in reversed(mail.references) if ref not in ids]
    return ids[:50]  # a References list of thousands is a forgery; the newest are the ones that matter


def followed_conversations(inbox: Inbox, sender: str) -> QuerySet[Conversation]:
    """Conversations of the account's other inboxes whose answers this inbox mails (a widget inbox whose
    `follow_up_inbox` is this one, helpdesk.channels.widget.follow_up), with `sender` as the contact's e-mail:
    the only conversations outside this inbox a reply may continue."""
    return Conversation.objects.filter(
        account_id=inbox.account_id,
        inbox__provider_config__follow_up_inbox=str(inbox.id),
        contact__email__iexact=sender,
    ).exclude(inbox=inbox)


def _header_conversation(inbox: Inbox, mail: ParsedMail) -> tuple[int, str] | None:
    ids = _header_ids(mail)
    if not ids:
        return None
    ours = {int(m.group(1)): ref for ref in ids if (m := _OUR_REPLY.match(ref))}
    theirs = [ref for ref in ids if not _OUR_REPLY.match(ref)]
    rows = Message.objects.filter(
        Q(inbox=inbox, conversation__contact_inbox__source_id=mail.sender)
        | Q(conversation__in=followed_conversations(inbox, mail.sender))
    ).values_list("id", "provider_message_id", "message_type", "conversation_id")
    found: dict[str, int] = {}
    for message_id, _, message_type, conversation_id in rows.filter(id__in=list(ours)):
        if message_type == Message.Type.OUTGOING:
            found[ours[message_id]] = conversation_id
    for _, provider_id, _, conversation_id in rows.filter(provider_message_id__in=theirs):
        found[provider_id or ""] = conversation_id
    for position, ref in enumerate(ids):
        if ref in found:
            return found[ref], "in-reply-to" if position == 0 and mail.in_reply_to else "references"
    return None


def _thread(inbox: Inbox, sender: str, conversation_id: int, how: str) -> Thread | None:
    """The Thread into `conversation_id` when it is the sender's in this inbox or a followed one; else None."""
    if Conversation.objects.filter(id=conversation_id, inbox=inbox, contact_inbox__source_id=sender).exists():
        return Thread(conversation_id=conversation_id, how=how)
    elsewhere = (
        followed_conversations(inbox, sender)
        .filter(id=conversation_id)
        .values_list("inbox_id", "contact_inbox__source_id")
        .first()
    )
    if elsewhere is None:
        return None
    return Thread(conversation_id=conversation_id, how=how, inbox_id=elsewhere[0], source_id=elsewhere[1])


def thread_of(inbox: Inbox, mail: ParsedMail, *, recipients: Iterable[str] = ()) -> Thread:
    """The conversation `mail` continues (see the module docstring); Thread(None) for a new conversation."""
    by_headers = _header_conversation(inbox, mail)
    if by_headers is not None and (thread := _thread(inbox, mail.sender, *by_headers)) is not None:
        return thread
    conversation_id = token_conversation(inbox.id, [*recipients, *mail.recipients])
    if (
        conversation_id is not None
        and (thread := _thread(inbox, mail.sender, conversation_id, "reply-token")) is not None
    ):
        return thread
    return Thread(conversation_id=None)
