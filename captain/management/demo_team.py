"""The demo account's running-a-team objects: business hours and an away message on its API inbox, an SLA policy
for that inbox, one macro and one automation rule. Idempotent (each is found by its name and updated)."""

from __future__ import annotations

from helpdesk.models import Account, AutomationRule, Inbox, Macro, SlaPolicy
from helpdesk.models.automation import Visibility

DEMO_HOURS = {
    "business_hours": "mon-fri 08:00-20:00; sat 10:00-16:00",
    "time_zone": "Europe/Berlin",
    "away_message": "Our team answers Monday to Friday 8:00-20:00 and Saturday 10:00-16:00 (Berlin time).",
}


def demo_team_setup(account: Account, inbox: Inbox) -> None:
    """People's side of the demo: who answers when, how fast, and two ways to do less by hand."""
    inbox.provider_config = {**(inbox.provider_config or {}), **DEMO_HOURS}
    inbox.sla_policy, _ = SlaPolicy.objects.update_or_create(
        account=account,
        name="Standard",
        defaults={
            "first_response_minutes": 30,
            "next_response_minutes": 60,
            "resolution_minutes": 8 * 60,
            "business_hours_only": True,
        },
    )
    inbox.save(update_fields=["provider_config", "sla_policy"])
    Macro.objects.update_or_create(
        account=account,
        name="Refund sent",
        defaults={
            "visibility": Visibility.ACCOUNT,
            "actions": [
                {"kind": "add_label", "value": "refund"},
                {"kind": "add_note", "value": "Refund issued to the original payment method."},
                {"kind": "resolve"},
            ],
        },
    )
    AutomationRule.objects.update_or_create(
        account=account,
        name="Urgent words",
        defaults={
            "event": "message_created",
            "conditions": {"text_contains": "urgent"},
            "actions": [
                {"kind": "set_priority", "value": "urgent"},
                {"kind": "add_label", "value": "urgent"},
            ],
        },
    )
