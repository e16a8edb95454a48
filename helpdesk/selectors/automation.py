"""Reading an account's automation rules and the runs recorded on a conversation."""

from __future__ import annotations

from django.db.models import QuerySet

from helpdesk.models import AutomationRule, AutomationRun


def account_automation_rules(*, account_id: int) -> QuerySet[AutomationRule]:
    return AutomationRule.objects.filter(account_id=account_id).order_by("name", "pk")


def account_automation_rule(*, account_id: int, rule_id: int) -> AutomationRule | None:
    return AutomationRule.objects.filter(account_id=account_id, pk=rule_id).first()


def conversation_automation_runs(*, account_id: int, conversation_id: int) -> QuerySet[AutomationRun]:
    return AutomationRun.objects.filter(account_id=account_id, conversation_id=conversation_id).order_by(
        "-pk"
    )
