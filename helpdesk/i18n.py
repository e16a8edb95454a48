"""The dashboard's language for each request: the person's choice, else the browser's, else LANGUAGE_CODE.

Django's LocaleMiddleware has already picked the browser's language (Accept-Language, or the language cookie)
by the time `PersonLanguageMiddleware` runs; a signed-in person who chose a language in the dashboard or over
the API gets theirs instead, on every device. The choice is read once per session and kept in it, so a page
costs no extra query; `remember_person_language` refreshes it when the person changes it.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.sessions.backends.base import SessionBase
from django.http import HttpRequest, HttpResponse
from django.utils import translation

from helpdesk.selectors.languages import person_language

SESSION_LANGUAGE_KEY = "person_language"
"""Session key holding `[user id, language]`; the user id guards against a session reused by someone else."""


def remember_person_language(session: SessionBase, *, user_id: int, language: str) -> None:
    session[SESSION_LANGUAGE_KEY] = [user_id, language]


def session_person_language(request: HttpRequest) -> str:
    """The signed-in person's language ("" when they follow the browser or nobody is signed in)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return ""
    cached = request.session.get(SESSION_LANGUAGE_KEY)
    if isinstance(cached, list) and len(cached) == 2 and cached[0] == user.pk:
        return str(cached[1])
    language = person_language(user_id=user.pk)
    remember_person_language(request.session, user_id=user.pk, language=language)
    return language


class PersonLanguageMiddleware:
    """Activate the person's chosen language; goes right after AuthenticationMiddleware (it needs the user)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        language = session_person_language(request)
        if language:
            translation.activate(language)
            request.LANGUAGE_CODE = translation.get_language()
        return self.get_response(request)


def person_language_context(request: HttpRequest) -> dict[str, str]:
    """Template context: the person's own choice ("" = browser), for the top bar's language switch."""
    return {"person_language": session_person_language(request)}
