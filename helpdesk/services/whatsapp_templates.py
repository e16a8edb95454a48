"""WhatsApp templates: synced from the Cloud API (approved ones upserted), and sent on a conversation whose
24-hour window is closed (the WhatsApp channel builds Meta's message; helpdesk.channels.registry lists them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.db import transaction

from helpdesk.channels.media import Failed
from helpdesk.channels.registry import UnknownChannel, message_templates
from helpdesk.models import Conversation, Inbox, Message, WhatsAppTemplate, WhatsAppTemplateSend
from helpdesk.services.messages import message_create_agent_reply

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Meta's limit for one text parameter of a template body.
VALUE_LIMIT = 1024


@dataclass(frozen=True)
class SyncResult:
    saved: int
    skipped: int
    """Not approved, or a body we cannot number (Meta's named parameters)."""


class SyncFailed(Exception):
    """The list could not be read; `str` is for people."""


def whatsapp_templates_sync(*, inbox: Inbox) -> SyncResult:
    """Read the business account's templates and upsert the approved ones by (name, language). Templates no
    longer approved at Meta are marked with Meta's status, so the composer stops offering them."""
    try:
        remote = message_templates(inbox)
    except UnknownChannel as exc:
        raise SyncFailed("Templates belong to a WhatsApp inbox.") from exc
    except Failed as exc:
        raise SyncFailed(str(exc)) from exc
    saved = skipped = 0
    with transaction.atomic():
        for item in remote:
            status = item.status if item.status in WhatsAppTemplate.Status.values else None
            if status != WhatsAppTemplate.Status.APPROVED:
                if status is not None:
                    WhatsAppTemplate.objects.filter(
                        inbox=inbox, name=item.name, language=item.language
                    ).update(status=status)
                skipped += 1
                continue
            template = WhatsAppTemplate.objects.filter(
                inbox=inbox, name=item.name, language=item.language
            ).first()
            template = template or WhatsAppTemplate(inbox=inbox, name=item.name, language=item.language)
            template.status = status
            template.category = item.category[:32]
            template.header_text = item.header_text[:60]
            template.body = item.body
            try:
                template.save()
            except ValidationError:
                skipped += 1
                continue
            saved += 1
    return SyncResult(saved=saved, skipped=skipped)


class TemplateRefused(Exception):
    """The template cannot be sent as asked; `str` is for people."""


@transaction.atomic
def whatsapp_template_send(
    *, conversation: Conversation, template: WhatsAppTemplate, variables: Sequence[str], by: User
) -> Message:
    """A person's reply as an approved template: the message's content is the filled body (what the agent and
    the history read), its WhatsAppTemplateSend what the WhatsApp channel sends; delivered by the outbox like
    any reply (helpdesk.channels.whatsapp.templates)."""
    if template.inbox_id != conversation.inbox_id:
        raise TemplateRefused("This template belongs to another inbox.")
    if template.status != WhatsAppTemplate.Status.APPROVED:
        raise TemplateRefused("Only a template Meta approved can be sent.")
    values = [str(value).strip() for value in variables]
    if len(values) != template.variables:
        raise TemplateRefused(f"This template needs {template.variables} values, {len(values)} given.")
    if any(not value or len(value) > VALUE_LIMIT for value in values):
        raise TemplateRefused(f"Every value must be filled, up to {VALUE_LIMIT} characters.")
    message = message_create_agent_reply(conversation=conversation, user=by, content=template.filled(values))
    WhatsAppTemplateSend.objects.create(
        message=message, template=template, name=template.name, language=template.language, values=values
    )
    return message
