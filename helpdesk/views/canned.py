"""The composer's canned responses: typing `/` and a few letters asks this view for the account's matching
saved replies, with the conversation's placeholders filled in, as JSON for the picker (helpdesk/conversation.js).

Placeholders are plain string substitutions, never a template engine: `{{contact.name}}`,
`{{contact.email}}` and `{{agent.name}}` (the person typing). Any other `{{...}}` stays as written.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import URLPattern, path
from django.views.decorators.http import require_GET

from helpdesk.models import Conversation, Membership
from helpdesk.selectors import dashboard_conversation
from helpdesk.selectors.canned import canned_search

from .base import CONVERSATION, account_view


def fill_placeholders(content: str, *, conversation: Conversation, agent_name: str) -> str:
    values = {
        "{{contact.name}}": conversation.contact.name or "",
        "{{contact.email}}": conversation.contact.email or "",
        "{{agent.name}}": agent_name,
    }
    for placeholder, value in values.items():
        content = content.replace(placeholder, value)
    return content


@require_GET
@account_view()
def canned_picker(request: HttpRequest, membership: Membership, conversation_id: int) -> JsonResponse:
    """`?q=` what was typed after `/`: up to 20 of the account's canned responses, best match first."""
    conversation = dashboard_conversation(account_id=membership.account_id, conversation_id=conversation_id)
    user = request.user
    agent_name = (user.get_full_name() or user.get_username()) if user.is_authenticated else ""
    found = canned_search(account_id=membership.account_id, query=request.GET.get("q", ""))
    return JsonResponse(
        {
            "results": [
                {
                    "id": c.pk,
                    "short_code": c.short_code,
                    "content": fill_placeholders(c.content, conversation=conversation, agent_name=agent_name),
                }
                for c in found
            ]
        }
    )


urlpatterns: list[URLPattern] = [
    path(f"{CONVERSATION}canned-responses/", canned_picker, name="canned-search"),
]
