"""The composer's WhatsApp templates: once the 24-hour window of a WhatsApp conversation is closed, Meta delivers
only an approved template, so the composer offers the inbox's templates (helpdesk/views/composer.py builds what
the page shows) and this view sends the one picked with its values."""

from __future__ import annotations

from django.contrib import messages as flash
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import URLPattern, path, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from helpdesk.models import Membership
from helpdesk.selectors import dashboard_conversation
from helpdesk.selectors.whatsapp_templates import template_for
from helpdesk.services.whatsapp_templates import TemplateRefused, whatsapp_template_send

from .base import CONVERSATION, AuthenticatedHttpRequest, account_view


@require_POST
@account_view()
def conversation_whatsapp_template(
    request: AuthenticatedHttpRequest, membership: Membership, conversation_id: int
) -> HttpResponse:
    conversation = dashboard_conversation(
        account_id=membership.account_id, conversation_id=conversation_id, user=request.user
    )
    template_id = request.POST.get("template", "")
    if not template_id.isdigit() or len(template_id) > 18:
        flash.error(request, _("Pick a template first."))
    else:
        template = template_for(inbox_id=conversation.inbox_id, template_id=int(template_id))
        values = [request.POST.get(f"value_{n}", "") for n in range(1, template.variables + 1)]
        try:
            whatsapp_template_send(
                conversation=conversation, template=template, variables=values, by=request.user
            )
        except TemplateRefused:
            flash.error(request, _("Fill in every value of the template."))
        else:
            flash.success(request, _("Template queued for delivery."))
    url = reverse("dashboard:conversation-detail", args=[membership.account_id, conversation.pk])
    return redirect(f"{url}?{request.GET.urlencode()}" if request.GET else url)


urlpatterns: list[URLPattern] = [
    path(
        f"{CONVERSATION}whatsapp-template/",
        conversation_whatsapp_template,
        name="conversation-whatsapp-template",
    ),
]
