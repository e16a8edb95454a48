"""Writes of canned responses (REST API; the Django admin edits the same rows). A short code is unique within
the account: the constraint decides, and a clash is a validation error naming the field."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from helpdesk.models import CannedResponse

MAX_CONTENT_CHARS = 10_000


def _save(canned: CannedResponse) -> CannedResponse:
    canned.short_code = canned.short_code.strip().lower()
    canned.full_clean(exclude=["account"], validate_unique=False, validate_constraints=False)
    if len(canned.content) > MAX_CONTENT_CHARS:
        raise ValidationError(
            {"content": [_("At most %(limit)s characters.") % {"limit": f"{MAX_CONTENT_CHARS:,}"}]}
        )
    try:
        with transaction.atomic():
            canned.save()
    except IntegrityError as exc:
        raise ValidationError(
            {
                "short_code": [
                    _("The short code “%(code)s” is already used in this account.")
                    % {"code": canned.short_code}
                ]
            }
        ) from exc
    return canned


def canned_response_create(*, account_id: int, short_code: str, content: str) -> CannedResponse:
    return _save(CannedResponse(account_id=account_id, short_code=short_code, content=content))


def canned_response_update(
    *, canned: CannedResponse, short_code: str | None = None, content: str | None = None
) -> CannedResponse:
    if short_code is not None:
        canned.short_code = short_code
    if content is not None:
        canned.content = content
    return _save(canned)


def canned_response_delete(*, canned: CannedResponse) -> None:
    canned.delete()
