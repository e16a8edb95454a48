"""Setting a person's dashboard language, the same in every account they belong to."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from helpdesk.models import Language, PersonSettings


def person_language_set(*, user_id: int, language: str) -> str:
    """Store the person's language ("" follows the browser) and return it; an unknown code is refused."""
    if language and language not in Language.values:
        choices = ", ".join(Language.values)
        raise ValidationError({"language": [_("Choose one of: %(choices)s.") % {"choices": choices}]})
    PersonSettings.objects.update_or_create(user_id=user_id, defaults={"language": language})
    return language
