"""Event webhooks in the Django admin: an account's endpoints (the signing secret is shown once, when made or
renewed) and the read-only delivery log with a replay action. Scoped per account like the rest of the admin."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.urls import URLPattern, path

from helpdesk.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from helpdesk.models.webhooks import new_webhook_secret
from helpdesk.outbound import validate_outbound_url
from helpdesk.services.event_webhooks import webhook_delivery_replay

from .scoping import AccountScopedAdminMixin


class WebhookEndpointForm(forms.ModelForm):
    events = forms.MultipleChoiceField(choices=WebhookEvent.choices, widget=forms.CheckboxSelectMultiple)
    url = forms.URLField(max_length=500, validators=[validate_outbound_url])
    new_secret = forms.BooleanField(
        required=False, label="Make a new signing secret", help_text="The old one stops working at once."
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["account", "name", "url", "events", "enabled"]


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    form = WebhookEndpointForm
    list_display = ("name", "account", "url", "enabled", "updated_at")
    list_filter = ("enabled",)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        secret = None
        if not change or form.cleaned_data.get("new_secret"):
            secret = new_webhook_secret()
            obj.secret_set(secret)
        super().save_model(request, obj, form, change)
        if secret:
            messages.warning(
                request, f"Signing secret of {obj.name} (shown this once, copy it now): {secret}"
            )


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    read_only = True
    list_display = (
        "created_at",
        "endpoint",
        "event",
        "status",
        "attempts",
        "last_status_code",
        "duration_ms",
        "last_error",
    )
    list_filter = ("status", "event")
    readonly_fields = (*list_display, "event_id", "payload", "replay_of")
    actions = ["replay"]
    change_form_template = "helpdesk/admin/webhook_delivery_change_form.html"

    def get_urls(self) -> list[URLPattern]:
        replay = path(
            "<path:object_id>/replay/",
            self.admin_site.admin_view(self.replay_view),
            name="helpdesk_webhookdelivery_replay",
        )
        return [replay, *super().get_urls()]

    def replay_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The change page's Replay button: the event again, as a new row of the log (POST only)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        delivery = self.get_object(request, object_id)  # the scoped queryset: another account's row is None
        if delivery is None or not self.has_view_permission(request, delivery):
            raise Http404("No such delivery.")
        replay = webhook_delivery_replay(delivery=delivery)
        self.message_user(request, f"Queued again as delivery {replay.pk}.", messages.SUCCESS)
        return redirect("admin:helpdesk_webhookdelivery_changelist")

    @admin.action(description="Replay: send the selected events again")
    def replay(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        count = 0
        for delivery in queryset:
            webhook_delivery_replay(delivery=delivery)
            count += 1
        self.message_user(request, f"{count} event(s) queued again.", messages.SUCCESS)
