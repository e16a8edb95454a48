"""Evaluating an account's automation rules for one event on one conversation (the Celery task's work; the entry
point is helpdesk.services.automation.automation_event).

For each active rule of the event, in id order: the conditions (all must hold), then the actions in order, each
through the services a person's click uses (helpdesk.services.automation_actions) inside
`rule_actions_running`, so they raise no new events (a rule never triggers a rule). An action that fails is
recorded and the next one still runs; a webhook is called once through the outbound policy with a short timeout
and never retried here (a receiver answering 500 gets no retry storm; its answer is in the run's record).
Every run is an AutomationRun row and an activity line on the conversation.

Bounded: at most RUNS_PER_MINUTE rule runs per conversation per minute; over it the rule is skipped and the
skip is logged (no row and no line: a storm must not write a storm of records).

`business_hours` asks the inbox's hours at the moment the rule runs (helpdesk.selectors.business_hours).
"""

from __future__ import annotations

import json
import logging
import uuid
from datetime import timedelta
from typing import Any

import httpx
from django.db import transaction
from django.utils import timezone

from helpdesk.models import AutomationRule, AutomationRun, Conversation, Message
from helpdesk.models.automation import Action, actions_parse
from helpdesk.outbound import OutboundRefused, outbound_client
from helpdesk.selectors.business_hours import inbox_is_open

from .activities import message_create_activity
from .automation import rule_actions_running
from .automation_actions import ActionFailed, action_apply
from .event_webhooks import conversation_data

logger = logging.getLogger(__name__)

RUNS_PER_MINUTE = 10
WEBHOOK_TIMEOUT_SECONDS = 5.0


def _last_customer_text(conversation: Conversation) -> str:
    return (
        Message.objects.filter(conversation=conversation, message_type=Message.Type.INCOMING)
        .order_by("-pk")
        .values_list("content", flat=True)
        .first()
        or ""
    )


def _ai_outcome(conversation: Conversation, message: Message | None) -> str:
    """'handoff' once handed to people; 'reply' when the AI answered (this message, or the conversation is
    still the AI's); '' otherwise."""
    if conversation.escalated_at is not None:
        return "handoff"
    if message is not None:
        answered = message.sender_type == Message.SenderType.ASSISTANT and not message.private
        return "reply" if answered else ""
    return "reply" if conversation.status == Conversation.Status.PENDING else ""


def conditions_hold(
    *, conditions: dict[str, Any], conversation: Conversation, message: Message | None
) -> bool:
    """Whether every condition of a rule holds for the conversation (and the event's message)."""
    if "inbox_ids" in conditions and conversation.inbox_id not in conditions["inbox_ids"]:
        return False
    if "channel_types" in conditions and conversation.inbox.channel_type not in conditions["channel_types"]:
        return False
    if "labels" in conditions:
        present = set(conversation.labels.values_list("name", flat=True))
        if not set(conditions["labels"]) <= present:
            return False
    if "text_contains" in conditions:
        text = message.content if message is not None else _last_customer_text(conversation)
        if conditions["text_contains"].casefold() not in (text or "").casefold():
            return False
    if "contact_attribute" in conditions:
        attr = conditions["contact_attribute"]
        if (conversation.contact.custom_attributes or {}).get(attr["key"]) != attr["value"]:
            return False
    if "business_hours" in conditions:
        inside = inbox_is_open(inbox=conversation.inbox)
        if inside != (conditions["business_hours"] == "inside"):
            return False
    return "ai_outcome" not in conditions or _ai_outcome(conversation, message) == conditions["ai_outcome"]


def _call_webhook(*, url: str, rule: AutomationRule, conversation: Conversation, event: str) -> str:
    body = json.dumps(
        {
            "event": event,
            "rule": {"id": rule.pk, "name": rule.name},
            "conversation": conversation_data(conversation),
        },
        separators=(",", ":"),
    ).encode()
    headers = {"Content-Type": "application/json", "X-Helpdesk-Event-Id": str(uuid.uuid4())}
    try:
        # Streamed and never read: only the status counts (a receiver's body is not ours to keep).
        with (
            outbound_client(timeout=WEBHOOK_TIMEOUT_SECONDS) as client,
            client.stream("POST", url, content=body, headers=headers) as response,
        ):
            status = response.status_code
    except OutboundRefused as exc:
        raise ActionFailed(f"webhook refused by the outbound policy: {exc}") from exc
    except httpx.TimeoutException as exc:
        raise ActionFailed(f"webhook timed out after {WEBHOOK_TIMEOUT_SECONDS:g} s") from exc
    except httpx.HTTPError as exc:
        raise ActionFailed(f"network error calling the webhook ({type(exc).__name__})") from exc
    if not 200 <= status < 300:
        raise ActionFailed(f"webhook answered HTTP {status}")
    return f"called webhook ({status})"


def _action_do(*, action: Action, rule: AutomationRule, conversation: Conversation, event: str) -> str:
    if action.kind == "call_webhook":
        return _call_webhook(url=str(action.value), rule=rule, conversation=conversation, event=event)
    with transaction.atomic():  # one action's writes stand or fall together; a failure undoes only its own
        conversation = Conversation.objects.get(pk=conversation.pk)
        return action_apply(conversation=conversation, action=action, actor=None)


def rule_run(*, rule: AutomationRule, conversation: Conversation, event: str) -> AutomationRun:
    """Run the rule's actions on the conversation (conditions already checked) and record the run."""
    done: list[str] = []
    errors: list[str] = []
    with rule_actions_running():
        for action in actions_parse(rule.actions):
            try:
                done.append(_action_do(action=action, rule=rule, conversation=conversation, event=event))
            except ActionFailed as exc:
                errors.append(f"{action.kind}: {exc}")
            except Exception as exc:  # a bug in one action must not lose the record of the others
                logger.exception("automation rule %s action %s failed", rule.pk, action.kind)
                errors.append(f"{action.kind}: failed ({type(exc).__name__})")
        run = AutomationRun.objects.create(
            account_id=rule.account_id,
            rule=rule,
            rule_name=rule.name,
            conversation=conversation,
            event=event,
            actions_done=done,
            error="; ".join(errors),
        )
        line = f"Automation rule “{rule.name}” ran: {', '.join(done) or 'nothing done'}."
        if errors:
            line += f" Failed: {'; '.join(errors)}."
        message_create_activity(conversation=conversation, content=line[:4000])
    return run


def automation_evaluate(
    *, event: str, conversation_id: int, message_id: int | None = None
) -> list[AutomationRun]:
    """Run every active rule of `event` whose conditions hold on the conversation; returns the runs."""
    conversation = Conversation.objects.select_related("inbox", "contact").filter(pk=conversation_id).first()
    if conversation is None:
        return []
    message = (
        Message.objects.filter(pk=message_id, conversation_id=conversation_id).first() if message_id else None
    )
    rules = AutomationRule.objects.filter(
        account_id=conversation.account_id, event=event, active=True
    ).order_by("pk")
    runs: list[AutomationRun] = []
    for rule in rules:
        if not conditions_hold(conditions=rule.conditions, conversation=conversation, message=message):
            continue
        recent = AutomationRun.objects.filter(
            conversation_id=conversation_id, created_at__gte=timezone.now() - timedelta(minutes=1)
        ).count()
        if recent >= RUNS_PER_MINUTE:
            logger.warning(
                "automation rule %s skipped on conversation %s: %s runs in the last minute",
                rule.pk,
                conversation_id,
                recent,
            )
            continue
        runs.append(rule_run(rule=rule, conversation=conversation, event=event))
        conversation.refresh_from_db()  # the next rule sees what this one changed
    return runs


def automation_rule_create(
    *,
    account_id: int,
    name: str,
    event: str,
    conditions: dict[str, Any],
    actions: list[Any],
    active: bool = True,
) -> AutomationRule:
    """A new rule of the account, its conditions and actions checked on save (ValidationError says what is
    wrong, a taken name too)."""
    rule = AutomationRule(
        account_id=account_id, name=name, event=event, conditions=conditions, actions=actions, active=active
    )
    rule.full_clean()
    rule.save()
    return rule


RULE_FIELDS = ("name", "event", "conditions", "actions", "active")


def automation_rule_update(*, rule: AutomationRule, **changes: Any) -> AutomationRule:
    """Change some of a rule's fields, checked like a new rule (ValidationError says what is wrong); no
    change saves nothing, so `updated_at` moves only when something did."""
    changed = [name for name in RULE_FIELDS if name in changes and getattr(rule, name) != changes[name]]
    if not changed:
        return rule
    for name in changed:
        setattr(rule, name, changes[name])
    rule.full_clean()
    rule.save(update_fields=[*changed, "updated_at"])
    return rule


def automation_rule_delete(*, rule: AutomationRule) -> None:
    """Delete a rule; the runs it made stay on their conversations with its name (`AutomationRun.rule_name`)."""
    rule.delete()
