"""A person's dashboard language (their PersonSettings row; none means the browser's language)."""

from __future__ import annotations

from helpdesk.models import PersonSettings


def person_language(*, user_id: int) -> str:
    """The language code the person chose, or "" to follow their browser's Accept-Language."""
    chosen = PersonSettings.objects.filter(user_id=user_id).values_list("language", flat=True).first()
    return chosen or ""
