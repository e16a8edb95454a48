"""Running a macro: its actions, in order, on one or many conversations, each through the service a person's
click uses (helpdesk.services.automation_actions.action_apply), as the person who runs it.

Bounded like bulk actions (helpdesk.services.bulk): at most BULK_LIMIT conversations, in batches of
BATCH_SIZE, one transaction per conversation (an action that fails is reported and the macro's other actions
and conversations still run; nothing of the failed action is written). Conversations the person cannot see
count as not found. Each conversation gets the line "Macro X run by Y" besides each action's own line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from helpdesk.models import Conversation, Macro
from helpdesk.models.automation import MACRO_ACTION_KINDS, Action, Visibility, actions_parse
from helpdesk.selectors.visibility import visible_conversations_q

from .activities import message_create_activity
from .automation_actions import ActionFailed, action_apply
from .bulk import BATCH_SIZE, BULK_LIMIT, BulkTooLarge


@dataclass
class MacroResult:
    conversations: int = 0
    """Conversations the macro ran on."""
    not_found: int = 0
    """Ids that are not conversations this person sees."""
    done: int = 0
    """Actions done, over every conversation."""
    failed: list[str] = field(default_factory=list)
    """One line per failed action: "#12: there is no canned response /refund" (at most 20 kept)."""
    failed_count: int = 0


def macro_run(*, macro: Macro, conversation_ids: list[int], actor: User) -> MacroResult:
    """Run `macro` on the conversations among `conversation_ids` that `actor` sees, in id order."""
    if macro.visibility == Visibility.PERSONAL and macro.owner_id != actor.pk:
        raise PermissionError("A personal macro is run by its owner only.")
    ids = sorted(set(conversation_ids))
    if len(ids) > BULK_LIMIT:
        raise BulkTooLarge(f"At most {BULK_LIMIT} conversations at once.")
    actions = actions_parse(macro.actions, kinds=MACRO_ACTION_KINDS)
    result = MacroResult()
    for start in range(0, len(ids), BATCH_SIZE):
        chunk = ids[start : start + BATCH_SIZE]
        conversations = list(
            Conversation.objects.filter(account_id=macro.account_id, pk__in=chunk)
            .filter(visible_conversations_q(account_id=macro.account_id, user=actor))
            .order_by("pk")
        )
        for conversation in conversations:
            _run_on(conversation, macro, actions, actor, result)
        result.conversations += len(conversations)
    result.not_found = len(ids) - result.conversations
    return result


def _run_on(
    conversation: Conversation, macro: Macro, actions: list[Action], actor: User, result: MacroResult
) -> None:
    message_create_activity(conversation=conversation, content=f"Macro “{macro.name}” run by {actor}.")
    for action in actions:
        try:
            with transaction.atomic():
                conversation.refresh_from_db()  # an earlier action may have changed it (status, team)
                action_apply(conversation=conversation, action=action, actor=actor)
        except ActionFailed as exc:
            result.failed_count += 1
            if len(result.failed) < 20:
                result.failed.append(f"#{conversation.pk}: {exc}")
            continue
        result.done += 1


def macro_create(*, account_id: int, name: str, actions: list[Any], owner: User, personal: bool) -> Macro:
    """A new macro: personal (its owner's only) or the account's; the actions are checked on save
    (ValidationError names the first wrong one)."""
    macro = Macro(
        account_id=account_id,
        name=name,
        actions=actions,
        visibility=Visibility.PERSONAL if personal else Visibility.ACCOUNT,
        owner=owner,
    )
    macro.full_clean()
    macro.save()
    return macro
