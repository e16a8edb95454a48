"""WhatsApp templates: synced from the Cloud API (approved ones upserted), and sent on a conversation whose
24-hour window is closed (helpdesk.channels.whatsapp.templates builds Meta's message)."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from helpdesk.channels.media import Failed
from helpdesk.channels.whatsapp.templates import list_templates
from helpdesk.models import Inbox, WhatsAppTemplate


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
    if inbox.channel_type != Inbox.ChannelType.WHATSAPP:
        raise SyncFailed("Templates belong to a WhatsApp inbox.")
    try:
        remote = list_templates(inbox)
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
