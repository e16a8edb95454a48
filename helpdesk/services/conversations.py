"""Changing a conversation: escalate to people, status, take over, labels, priority, assignee, team.

Every change a person or the AI makes writes an activity line in the thread (who did what), only when something
changed: a label that was already there, or the same priority again, says nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, overload

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from helpdesk.models import AutomationEvent, Conversation, Label, Message, Team, TeamMember
from helpdesk.realtime.events import conversation_changed

from .activities import AI, Actor, actor_name, message_create_activity
from .assignment import assign_waiting, conversation_auto_assign
from .automation import automation_event
from .csat import csat_request_after_resolution
from .event_webhooks import conversation_updated
from .languages import in_server_language
from .messages import ai_taken_over, message_create_note
from .notifications import notify_assigned, notify_escalated
from .out_of_office import out_of_office_claim


@transaction.atomic
def conversation_escalate(
    *,
    conversation: Conversation,
    reason: str,
    customer_message: str,
    priority: str | None = None,
    by: str = AI,
    team_id: int | None = None,
    actor: User | None = None,
) -> Message | None:
    """Hand the conversation to people: status `open`, the reason kept as a private note, the customer told.

    `reason` is what the people who pick it up read (plain language; the AI's internals stay in its debug log).
    `team_id` names the team that picks it up: the conversation is assigned round-robin among its available
    members (helpdesk.services.assignment), and whoever should know is notified (never `actor`, the person who
    handed it over, if one did). Handed to the team anew, it is nobody's yet: back in "Needs people".

    Returns the outgoing message to the customer (queued for delivery), or None if there was nothing to say.
    """
    from .messages import (
        message_create_ai_reply,
    )  # local: both modules are small and import each other's names

    conversation = Conversation.objects.select_for_update(no_key=True).get(pk=conversation.pk)
    now = timezone.now()
    conversation.status = Conversation.Status.OPEN
    conversation.waiting_since = conversation.waiting_since or now
    conversation.escalated_at = conversation.escalated_at or now
    conversation.escalation_reason = reason[:2000]
    conversation.snoozed_until = None
    conversation.taken_at = None
    fields = ["status", "waiting_since", "escalated_at", "escalation_reason", "snoozed_until", "taken_at"]
    if priority and priority in Conversation.Priority.values:
        conversation.priority = priority
        fields.append("priority")
    team = Team.objects.filter(pk=team_id, account_id=conversation.account_id).first() if team_id else None
    if team is not None:
        conversation.team = team
        fields.append("team")
    conversation.save(update_fields=fields)
    message_create_note(conversation=conversation, content=f"Handoff reason: {reason}")
    to_whom = f"the team {team.name}" if team is not None else "the team"
    message_create_activity(conversation=conversation, content=f"{by} handed the conversation to {to_whom}.")
    automation_event(event=AutomationEvent.CONVERSATION_UPDATED, conversation_id=conversation.pk)
    assignee = conversation_auto_assign(conversation=conversation)
    notify_escalated(conversation=conversation, assignee=assignee, actor=actor)
    # Outside business hours the customer also learns when people will reply (once per closed period).
    if away := out_of_office_claim(conversation=conversation):
        customer_message = f"{customer_message.strip()}\n\n{away}".strip()
    if not customer_message.strip():
        return None
    return message_create_ai_reply(
        conversation=conversation, content=customer_message, agent_key="", agent_name="Handoff", answer=False
    )


@transaction.atomic
def conversation_set_status(
    *,
    conversation: Conversation,
    status: str,
    actor: User | str,
    resolved_by: str = "",
    snoozed_until: datetime | None = None,
) -> Conversation:
    """Change the status. Resolving records when and by whom (`resolved_by`: a person when `actor` is a user,
    else the AI unless given) and asks for a rating when the inbox does (after commit); snoozing needs
    `snoozed_until` (the sweep or the customer's next message wakes it)."""
    if status not in Conversation.Status.values:
        raise ValueError(f"Unknown status {status!r}")
    if status == Conversation.Status.SNOOZED and snoozed_until is None:
        raise ValueError("Snoozing needs a wake-up time.")
    conversation = Conversation.objects.select_for_update(no_key=True).get(pk=conversation.pk)
    if conversation.status == status and status != Conversation.Status.SNOOZED:
        return conversation
    previous = conversation.status
    conversation.status = status
    fields = ["status", "snoozed_until"]
    conversation.snoozed_until = snoozed_until if status == Conversation.Status.SNOOZED else None
    if status == Conversation.Status.RESOLVED:
        conversation.resolved_at = timezone.now()
        conversation.resolved_by = resolved_by or (
            Conversation.ResolvedBy.AGENT if isinstance(actor, User) else Conversation.ResolvedBy.AI
        )
        fields += ["resolved_at", "resolved_by"]
    elif previous == Conversation.Status.RESOLVED:
        # Reopened: the next resolution is measured again.
        conversation.resolved_at = None
        conversation.resolved_by = ""
        fields += ["resolved_at", "resolved_by"]
    if status in (Conversation.Status.RESOLVED, Conversation.Status.PENDING):
        conversation.waiting_since = None
        fields.append("waiting_since")
    if status == Conversation.Status.PENDING:
        # Handing back to the AI starts again at triage; nobody holds it any more.
        conversation.ai_agent_key = ""
        conversation.taken_at = None
        fields += ["ai_agent_key", "taken_at"]
    taking_over = (
        previous == Conversation.Status.PENDING
        and status == Conversation.Status.OPEN
        and isinstance(actor, User)
    )
    if taking_over:
        # Taken from the AI by a person: theirs, not the team's queue ("Needs people") while they hold it.
        conversation.taken_at = timezone.now()
        fields.append("taken_at")
    conversation.save(update_fields=fields)
    automation_event(event=AutomationEvent.CONVERSATION_UPDATED, conversation_id=conversation.pk)
    if taking_over:
        message_create_activity(conversation=conversation, content=f"{actor} took over from the AI.")
    elif status == Conversation.Status.SNOOZED:
        until = timezone.localtime(snoozed_until).strftime("%Y-%m-%d %H:%M %Z")
        message_create_activity(
            conversation=conversation, content=f"{actor} snoozed the conversation until {until}."
        )
    else:
        message_create_activity(
            conversation=conversation, content=f"{actor} changed the status from {previous} to {status}."
        )
    if status == Conversation.Status.RESOLVED:
        conversation_id = conversation.pk
        transaction.on_commit(lambda: csat_request_after_resolution(conversation_id=conversation_id))
        if conversation.assignee_id is not None:
            # A place freed up: the oldest conversation waiting in the person's teams and inboxes is theirs.
            assign_waiting(account_id=conversation.account_id, user_id=conversation.assignee_id)
    if taking_over:
        ai_taken_over(conversation=conversation)
    return conversation


@transaction.atomic
def conversation_take_over(*, conversation: Conversation, user: User) -> Conversation:
    """A person takes the conversation for themselves: from the AI (it stays quiet from now on), from the team's
    queue, or from a colleague. It is assigned to them and leaves "Needs people" while they hold it. One activity
    line; nobody is notified (they did it themselves)."""
    conversation = Conversation.objects.select_for_update(no_key=True).get(pk=conversation.pk)
    from_ai = conversation.status == Conversation.Status.PENDING
    if conversation.status != Conversation.Status.OPEN:
        # From the AI: "took over from the AI"; a resolved or snoozed one is reopened first.
        conversation = conversation_set_status(
            conversation=conversation, status=Conversation.Status.OPEN, actor=user
        )
    if conversation.assignee_id == user.pk and conversation.taken_at is not None:
        return conversation
    line = None
    if not from_ai:
        holder = conversation.assignee if conversation.assignee_id not in (None, user.pk) else None
        line = (
            f"{user} took the conversation over from {holder}."
            if holder
            else f"{user} took the conversation."
        )
    _assign(conversation=conversation, assignee=user, by=user, line=line)
    return conversation


@overload
def conversation_add_label(
    *, conversation: Conversation, name: str, by: Actor, create: Literal[True] = True
) -> Label: ...
@overload
def conversation_add_label(
    *, conversation: Conversation, name: str, by: Actor, create: bool
) -> Label | None: ...
def conversation_add_label(
    *, conversation: Conversation, name: str, by: Actor, create: bool = True
) -> Label | None:
    """Put a label on the conversation (`by`: a person, or "The AI", "The website"). With `create=False` only
    one of the account's existing labels (None when there is no such label): the AI may use the team's labels but
    not invent new ones."""
    label: Label | None
    if create:
        label, _ = Label.objects.get_or_create(account_id=conversation.account_id, name=name)
    else:
        label = Label.objects.filter(account_id=conversation.account_id, name=name).first()
        if label is None:
            return None
    if not conversation.labels.filter(pk=label.pk).exists():
        conversation.labels.add(label)
        automation_event(event=AutomationEvent.CONVERSATION_UPDATED, conversation_id=conversation.pk)
        message_create_activity(
            conversation=conversation, content=f"{actor_name(by)} added the label “{label.name}”."
        )
    return label


def conversation_remove_label(*, conversation: Conversation, name: str, by: Actor) -> bool:
    """Take a label off the conversation (the label itself stays for the account). False if it was not on it."""
    label = Label.objects.filter(account_id=conversation.account_id, name=name).first()
    if label is None or not conversation.labels.filter(pk=label.pk).exists():
        return False
    conversation.labels.remove(label)
    automation_event(event=AutomationEvent.CONVERSATION_UPDATED, conversation_id=conversation.pk)
    message_create_activity(
        conversation=conversation, content=f"{actor_name(by)} removed the label “{label.name}”."
    )
    return True


def conversation_set_priority(*, conversation: Conversation, priority: str, by: Actor) -> None:
    if priority not in Conversation.Priority.values:
        raise ValueError(f"Unknown priority {priority!r}")
    changed = (
        Conversation.objects.filter(pk=conversation.pk).exclude(priority=priority).update(priority=priority)
    )
    conversation.priority = priority
    if not changed:
        return
    automation_event(event=AutomationEvent.CONVERSATION_UPDATED, conversation_id=conversation.pk)
    conversation_changed(conversation, change="priority")  # .update() sends no signal
    conversation_updated(conversation)  # outbound event webhooks, likewise
    who = actor_name(by)
    line = (
        f"{who} removed the priority."
        if priority == Conversation.Priority.NONE
        else f"{who} set the priority to {in_server_language(Conversation.Priority(priority).label).lower()}."
    )
    message_create_activity(conversation=conversation, content=line)


def conversation_set_team(*, conversation: Conversation, team: Team | None, by: Actor) -> None:
    """Give the conversation to one of the account's teams (None: no team). Another account's team is refused.
    A team that auto-assigns then picks one of its members for an open conversation (`_team_takes_over`)."""
    if team is not None and team.account_id != conversation.account_id:
        raise ValueError("That team is not one of this account's.")
    previous = Conversation.objects.filter(pk=conversation.pk).values_list(
        "team__name", "team_id"
    ).first() or ("", None)
    team_id = team.pk if team is not None else None
    if previous[1] == team_id:
        return
    Conversation.objects.filter(pk=conversation.pk).update(team=team)
    conversation.team = team
    conversation_changed(conversation, change="team")  # .update() sends no signal
    automation_event(event=AutomationEvent.CONVERSATION_UPDATED, conversation_id=conversation.pk)
    conversation_updated(conversation)  # outbound event webhooks, likewise
    who = actor_name(by)
    line = (
        f"{who} gave the conversation to the team {team.name}."
        if team is not None
        else f"{who} took the conversation off the team {previous[0]}."
    )
    message_create_activity(conversation=conversation, content=line)
    if team is not None and team.auto_assign:
        _team_takes_over(conversation=conversation, team=team)


def _team_takes_over(*, conversation: Conversation, team: Team) -> None:
    """Moved to a team that auto-assigns: a holder from outside the team lets go, and the team's round-robin
    picks one of its members. Only for a conversation open for people: one the AI is handling stays with it
    until it hands over (the escalation assigns then)."""
    row = Conversation.objects.filter(pk=conversation.pk).values("status", "assignee_id").first()
    if row is None or row["status"] != Conversation.Status.OPEN:
        return
    holder = row["assignee_id"]
    if holder is not None:
        if TeamMember.objects.filter(team=team, user_id=holder).exists():
            return  # already with one of the team's people
        line = f"The team {team.name} picks someone: the previous assignee is not in it."
        _assign(conversation=conversation, assignee=None, by=None, line=line)
    conversation.assignee = None
    conversation_auto_assign(conversation=conversation, say_when_nobody=False)


def conversation_assign(*, conversation: Conversation, assignee: User | None, by: User | None = None) -> None:
    """Assign to a person (or nobody). Assigned by a person (`by`), the conversation is taken: it leaves "Needs
    people" while someone holds it. The new assignee is notified unless they assigned themselves."""
    who = str(by) if by is not None else "Someone"
    if assignee is None:
        line = f"{who} unassigned the conversation."
    elif by is not None and by.pk == assignee.pk:
        line = f"{who} assigned the conversation to themselves."
    else:
        line = f"{who} assigned the conversation to {assignee}."
    _assign(conversation=conversation, assignee=assignee, by=by, line=line)


def _assign(*, conversation: Conversation, assignee: User | None, by: User | None, line: str | None) -> None:
    """The assignment itself: the row (and `taken_at`), the live event, the activity line when the assignee
    changed, and the new assignee's notification."""
    previous = Conversation.objects.filter(pk=conversation.pk).values_list("assignee_id", flat=True).first()
    taken_at = timezone.now() if assignee is not None and by is not None else None
    Conversation.objects.filter(pk=conversation.pk).update(assignee=assignee, taken_at=taken_at)
    conversation.assignee = assignee
    conversation.taken_at = taken_at
    conversation_changed(conversation, change="assignee")  # .update() sends no signal
    conversation_updated(conversation)  # outbound event webhooks, likewise
    changed = (assignee.pk if assignee is not None else None) != previous
    if changed:
        automation_event(event=AutomationEvent.CONVERSATION_UPDATED, conversation_id=conversation.pk)
    if line and changed:
        message_create_activity(conversation=conversation, content=line)
    if assignee is not None and changed and (by is None or by.pk != assignee.pk):
        notify_assigned(conversation=conversation, assignee=assignee, by=by)
    if previous is not None and changed:
        # The previous assignee has a place free: a waiting conversation, never this one straight back.
        assign_waiting(account_id=conversation.account_id, user_id=previous, skip_id=conversation.pk)
