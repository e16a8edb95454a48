"""What a channel delivers with a customer's message for people only, besides its text (which the AI reads):

- a sanitised HTML rendering (an e-mail's HTML part, cleaned by its channel), kept as a file of the message named
  `message.html` and listed with its files, so an agent can open the mail as it was laid out. The dashboard serves
  it like every file (helpdesk.views.attachments: only to the account's people, `nosniff`, and a sandboxing
  Content-Security-Policy under which nothing runs or loads);
- files that came inside the message (an e-mail's attachments), each checked like a downloaded file and stored,
  or recorded refused with the reason (helpdesk.services.attachments.attachment_store_received): a type we do not
  keep or a file over the size limit is a note on the message, and the message is stored all the same;
- the addresses the customer copied (an e-mail's Cc), kept on the conversation under the reserved custom
  attribute key `cc` (no column of its own: that is a migration of the helpdesk app), latest mail first.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from helpdesk.channels.base import ReceivedFile
from helpdesk.conf import helpdesk_setting
from helpdesk.models import Attachment, Conversation, Message

from .attachments import attachment_store_received

HTML_FILE_NAME = "message.html"
HTML_CONTENT_TYPE = "text/html; charset=utf-8"
CC_KEY = "cc"


def message_html_keep(*, message: Message, html: str) -> Attachment | None:
    """Keep `html` (already sanitised by the channel) as a stored file of `message`; past the attachment size
    limit a refused file row says why (the text is stored either way). None when there is no HTML."""
    if not html:
        return None
    data = html.encode("utf-8")
    limit = int(helpdesk_setting("ATTACHMENT_MAX_BYTES"))
    row = Attachment(
        account_id=message.account_id,
        message=message,
        kind=Attachment.Kind.FILE,
        provider_ref="inline:html",
        content_type=HTML_CONTENT_TYPE,
        size=min(len(data), 2**31 - 1),
        file_name=HTML_FILE_NAME,
    )
    if len(data) > limit:
        row.status = Attachment.Status.REFUSED
        row.error = f"The mail's HTML version is over {limit} bytes and was not kept; its text was."
    else:
        name = f"attachments/{message.account_id}/{secrets.token_urlsafe(24)}.html"
        row.file.name = default_storage.save(name, ContentFile(data, name=name))
        row.status = Attachment.Status.STORED
    row.save()
    _listed(message, [row])
    return row


def message_files_keep(*, message: Message, files: Sequence[ReceivedFile]) -> list[Attachment]:
    """Store (or record refused, with why) each file that came inside `message`."""
    rows = [
        attachment_store_received(
            message=message, file_name=item.file_name, declared_type=item.content_type, data=item.data
        )
        for item in files
    ]
    _listed(message, rows)
    return rows


def _listed(message: Message, rows: Sequence[Attachment]) -> None:
    """The dashboard lists a message's files when its `attachments` report some (InboundMessage.attachments)."""
    if rows:
        message.attachments = [
            *message.attachments,
            *(
                {"type": row.kind, "file_name": row.file_name, "content_type": row.content_type}
                for row in rows
            ),
        ]
        message.save(update_fields=["attachments"])


def conversation_cc_set(*, conversation: Conversation, cc: tuple[str, ...]) -> None:
    """Put the latest mail's Cc on the conversation (in the caller's transaction, the conversation locked);
    the caller saves `custom_attributes`."""
    if cc:
        conversation.custom_attributes = {**(conversation.custom_attributes or {}), CC_KEY: ", ".join(cc)}
