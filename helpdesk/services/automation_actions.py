"""Doing one macro or rule action to one conversation, through the same services a person's click uses (so each
change writes its usual activity line, live event, notifications and webhooks). Shared by macros
(helpdesk.services.macros, a person) and automation rules (helpdesk.services.automation_rules, "Automation").

`action_apply` returns what it did in a few words for the run's record, or raises ActionFailed with the reason
(a team or person no longer in the account, an unknown canned response): the caller records it and goes on.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import EmailMessage
from django.utils import timezone

from helpdesk.models import CannedResponse, Conversation, Membership, Team, TeamMember
from helpdesk.models.automation import Action

from .conversations import (
    conversation_add_label,
    conversation_assign,
    conversation_remove_label,
    conversation_set_priority,
    conversation_set_status,
    conversation_set_team,
)
from .messages import message_create_agent_reply, message_create_greeting, message_create_note

AUTOMATION = "Automation"
"""The actor named on activity lines when a rule, not a person, made the change."""


class ActionFailed(Exception):
    """The action could not be done (said in plain words; nothing of it was written)."""


def _member(conversation: Conversation, user_id: int) -> User:
    user = User.objects.filter(
        pk=user_id, pk__in=Membership.objects.filter(account_id=conversation.account_id).values("user_id")
    ).first()
    if user is None:
        raise ActionFailed(f"person #{user_id} is not a member of this account")
    return user


def _team(conversation: Conversation, team_id: int) -> Team:
    team = Team.objects.filter(pk=team_id, account_id=conversation.account_id).first()
    if team is None:
        raise ActionFailed(f"team #{team_id} is not one of this account's")
    return team


def _canned(conversation: Conversation, short_code: str) -> CannedResponse:
    canned = CannedResponse.objects.filter(account_id=conversation.account_id, short_code=short_code).first()
    if canned is None:
        raise ActionFailed(f"there is no canned response /{short_code}")
    return canned


def action_apply(*, conversation: Conversation, action: Action, actor: User | None) -> str:
    """Do `action` to `conversation` as `actor` (None: an automation rule). Returns what was done."""
    by = actor if actor is not None else AUTOMATION
    kind, value = action.kind, action.value
    if kind == "add_label":
        conversation_add_label(conversation=conversation, name=str(value), by=by)
        return f"added label {value}"
    if kind == "remove_label":
        conversation_remove_label(conversation=conversation, name=str(value), by=by)
        return f"removed label {value}"
    if kind == "assign_agent":
        assignee = _member(conversation, int(value)) if value is not None else None
        conversation_assign(conversation=conversation, assignee=assignee, by=actor)
        return f"assigned {assignee}" if assignee else "unassigned"
    if kind == "assign_team":
        team = _team(conversation, int(value)) if value is not None else None
        conversation_set_team(conversation=conversation, team=team, by=by)
        return f"gave to team {team.name}" if team else "took off the team"
    if kind == "set_priority":
        conversation_set_priority(conversation=conversation, priority=str(value), by=by)
        return f"set priority {value}"
    if kind == "snooze":
        until = timezone.now() + timedelta(minutes=int(value or 0))
        conversation_set_status(
            conversation=conversation, status=Conversation.Status.SNOOZED, actor=by, snoozed_until=until
        )
        return f"snoozed {value} min"
    if kind == "resolve":
        # A rule is set up by people: its resolutions count as theirs in the reports, not the AI's.
        conversation_set_status(
            conversation=conversation,
            status=Conversation.Status.RESOLVED,
            actor=by,
            resolved_by=Conversation.ResolvedBy.AGENT,
        )
        return "resolved"
    if kind == "send_canned":
        canned = _canned(conversation, str(value))
        if actor is not None:
            message_create_agent_reply(conversation=conversation, user=actor, content=canned.content)
        else:
            # No person wrote it: sent as the inbox itself, as its greeting is (no AI credit, nobody takes over).
            message_create_greeting(conversation=conversation, content=canned.content)
        return f"sent /{canned.short_code}"
    if kind == "add_note":
        message_create_note(conversation=conversation, content=str(value), user=actor)
        return "added a note"
    if kind == "email_team":
        return _email_team(conversation=conversation, text=str(value))
    raise ActionFailed(f"{kind} is not an action here")


def _email_team(*, conversation: Conversation, text: str) -> str:
    """E-mail the conversation's team (its members with an address); no team or nobody to write to fails."""
    if conversation.team_id is None:
        raise ActionFailed("the conversation has no team to e-mail")
    emails = sorted(
        {
            e
            for e in User.objects.filter(
                pk__in=TeamMember.objects.filter(team_id=conversation.team_id).values("user_id"),
                is_active=True,
            ).values_list("email", flat=True)
            if e
        }
    )
    if not emails:
        raise ActionFailed("nobody in the team has an e-mail address")
    subject = f"Conversation #{conversation.pk}: {text.splitlines()[0][:80]}"
    body = f"{text}\n\nConversation #{conversation.pk} in {conversation.inbox}."
    # One mail, the team in Bcc: members do not see each other's addresses.
    EmailMessage(subject=subject, body=body, from_email=settings.DEFAULT_FROM_EMAIL, bcc=emails).send()
    return f"e-mailed the team ({len(emails)})"
