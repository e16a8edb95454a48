"""Which of the account's assistants a per-assistant dashboard page shows: `?assistant=<id>`, else the first."""

from __future__ import annotations

from django.http import HttpRequest

from captain.assistants.models import Assistant
from captain.assistants.selectors import access_assistant, assistant_list


def chosen_assistant(request: HttpRequest, account_id: int) -> tuple[list[Assistant], Assistant | None]:
    """(the account's assistants, the one asked for or the first; None when there is none). An id of another
    account's assistant is a 404 (`access_assistant`)."""
    assistants = list(assistant_list(account_id=account_id))
    wanted = request.GET.get("assistant", "")
    if wanted.isdigit():
        return assistants, access_assistant(account_id=account_id, assistant_id=int(wanted))
    return assistants, assistants[0] if assistants else None
