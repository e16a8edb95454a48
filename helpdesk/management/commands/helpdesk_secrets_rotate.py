"""Encrypt every inbox secret stored at rest again with the first of HELPDESK_SECRETS_KEYS.

Rotation: put the new key first (`HELPDESK_SECRETS_KEYS=new,old`), run this, then drop the old key. A secret no
configured key can read is named (inbox id and field) and left as it is; the command then fails, so a rotation
that would lose a password is noticed before the old key is thrown away.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from helpdesk.crypto import SecretUnreadable, secret_rotate
from helpdesk.models import Inbox

FIELDS = ("smtp_password_encrypted", "imap_password_encrypted")


class Command(BaseCommand):
    help = "Encrypt the inboxes' stored passwords again with the first HELPDESK_SECRETS_KEYS key."

    def handle(self, *args: Any, **options: Any) -> None:
        rotated, unreadable = 0, []
        stored = Inbox.objects.exclude(smtp_password_encrypted="", imap_password_encrypted="")
        for inbox_id in stored.values_list("id", flat=True):
            with transaction.atomic():
                inbox = Inbox.objects.select_for_update().get(pk=inbox_id)
                changed = []
                for field in FIELDS:
                    try:
                        setattr(inbox, field, secret_rotate(getattr(inbox, field)))
                    except SecretUnreadable:
                        unreadable.append(f"inbox {inbox.id} {field}")
                        continue
                    changed.append(field)
                inbox.save(update_fields=changed)
                rotated += len([f for f in changed if getattr(inbox, f)])
        self.stdout.write(f"{rotated} secret(s) encrypted with the first key.")
        if unreadable:
            raise CommandError("No configured key reads: " + ", ".join(unreadable) + " (left as they were).")
