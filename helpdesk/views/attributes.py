"""The conversation page's attributes panel: the contact's and the conversation's custom attributes (edited here),
and the AI's memory of the conversation (shown and edited through the AI responder, which owns it).

Any member of the account may edit, like the page's other actions. A form posts every field; only the fields
whose text differs from what the page showed are written, so a stored value that no longer fits its definition
does not block saving the others. One bad value and nothing is saved: the flash message names it.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages as flash
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from helpdesk.conf import ai_responder
from helpdesk.models import Conversation, CustomAttributeDefinition, Membership
from helpdesk.selectors import dashboard_conversation
from helpdesk.selectors.attributes import attribute_definitions, attribute_rows, attribute_value_text
from helpdesk.services.attributes import attribute_value_from_text, custom_attributes_update

from .base import account_view

FIELD_PREFIX = "attr_"
AppliesTo = CustomAttributeDefinition.AppliesTo


def memory_panel(conversation: Conversation) -> dict[str, object] | None:
    """The AI responder's memory panel of this conversation (where to post, the variables and values), or None
    without a responder that offers one."""
    build = getattr(ai_responder(), "memory_panel", None)
    return build(conversation=conversation) if build else None


def attributes_panel(*, account_id: int, conversation: Conversation) -> dict[str, Any]:
    """What `dashboard/partials/attributes_panel.html` shows (one query for both kinds of definitions)."""
    definitions = list(attribute_definitions(account_id=account_id))
    contact = [d for d in definitions if d.applies_to == AppliesTo.CONTACT]
    own = [d for d in definitions if d.applies_to == AppliesTo.CONVERSATION]
    sections = [
        (AppliesTo.CONTACT, _("Customer attributes"), contact, conversation.contact.custom_attributes),
        (AppliesTo.CONVERSATION, _("Conversation attributes"), own, conversation.custom_attributes),
    ]
    return {
        "sections": [
            {
                "target": target,
                "title": title,
                "rows": attribute_rows(definitions=defs, values=values or {}),
                "url": reverse(
                    "dashboard:conversation-attributes", args=[account_id, conversation.pk, target]
                ),
            }
            for target, title, defs, values in sections
        ],
        "memory": memory_panel(conversation),
    }


def _error_text(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return " ".join(message for messages in exc.message_dict.values() for message in messages)
    return " ".join(exc.messages)


@require_POST
@account_view()
def conversation_attributes(
    request: HttpRequest, membership: Membership, conversation_id: int, target: str
) -> HttpResponse:
    """Save the contact's (`target=contact`) or the conversation's custom attributes from the panel's form."""
    if target not in AppliesTo.values:
        raise Http404("No such attributes.")
    conversation = dashboard_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    owner = conversation.contact if target == AppliesTo.CONTACT else conversation
    current = owner.custom_attributes or {}
    changes: dict[str, object] = {}
    for definition in attribute_definitions(account_id=membership.account_id, applies_to=target):
        field = f"{FIELD_PREFIX}{definition.key}"
        if field not in request.POST:
            continue
        text = request.POST[field]
        if text.strip() == attribute_value_text(current.get(definition.key)).strip():
            continue  # unchanged: a stored value that no longer fits is not re-checked
        changes[definition.key] = attribute_value_from_text(definition, text)
    back = redirect("dashboard:conversation-detail", membership.account_id, conversation.pk)
    contact_side = target == AppliesTo.CONTACT
    if not changes:
        flash.info(
            request,
            _("Contact attributes unchanged.") if contact_side else _("Conversation attributes unchanged."),
        )
        return back
    try:
        custom_attributes_update(target=owner, changes=changes)
    except ValidationError as exc:
        flash.error(request, _("Nothing saved: %(reason)s") % {"reason": _error_text(exc)})
        return back
    flash.success(
        request, _("Contact attributes saved.") if contact_side else _("Conversation attributes saved.")
    )
    return back
