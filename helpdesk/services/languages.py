"""Setting a person's dashboard language, the same in every account they belong to."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import translation
from django.utils.translation import gettext as _

from helpdesk.models import Inbox, Language, PersonSettings

if TYPE_CHECKING:  # django-stubs-ext is a development requirement
    from django_stubs_ext import StrOrPromise


def person_language_set(*, user_id: int, language: str) -> str:
    """Store the person's language ("" follows the browser) and return it; an unknown code is refused."""
    if language and language not in Language.values:
        choices = ", ".join(Language.values)
        raise ValidationError({"language": [_("Choose one of: %(choices)s.") % {"choices": choices}]})
    PersonSettings.objects.update_or_create(user_id=user_id, defaults={"language": language})
    return language


def in_server_language(text: StrOrPromise) -> str:
    """A translatable label as stored text (activity lines, notifications): written in the server's language
    (LANGUAGE_CODE), whichever language the dashboard of the person acting happens to speak."""
    with translation.override(settings.LANGUAGE_CODE):
        return str(text)


def in_inbox_language(inbox: Inbox, text: StrOrPromise) -> str:
    """A built-in text a customer reads (the rating question, its thanks), in the inbox's language."""
    with translation.override(inbox.language or settings.LANGUAGE_CODE):
        return str(text)
