"""`.../conversations/<id>/typing/`: the conversation page's composer says a person is writing a reply, so the
website widget can show that conversation's visitor "typing" (helpdesk.realtime.typing publishes it, throttled
per conversation). Sent by conversation_typing.js while the composer is on "reply", never on "private note"; a
page without JavaScript simply sends nothing.

A POST with the page's CSRF token, by a member of the account, for a conversation of that account (another
account's is a 404, as for the reply itself). Answers 204 whether or not this call was the one published.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import URLPattern, path
from django.views.decorators.http import require_POST

from helpdesk.models import Membership
from helpdesk.realtime.typing import agent_typing
from helpdesk.selectors import access_conversation

from .base import CONVERSATION, AuthenticatedHttpRequest, account_view


@require_POST
@account_view()
def conversation_typing(
    request: AuthenticatedHttpRequest, membership: Membership, conversation_id: int
) -> HttpResponse:
    conversation = access_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    agent_typing(account_id=conversation.account_id, conversation_id=conversation.pk)
    return HttpResponse(status=204)


urlpatterns: list[URLPattern] = [
    path(f"{CONVERSATION}typing/", conversation_typing, name="conversation-typing"),
]
