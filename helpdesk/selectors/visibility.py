"""Which conversations a person may see: the one rule every conversation read applies (lists, counts, search,
the conversation page, the API, bulk actions, live events).

An administrator sees every conversation of the account. An agent sees the conversations of the inboxes they
are a member of (helpdesk.models.InboxMember), and those of inboxes that have no members at all: an inbox
nobody was made a member of stays open to every agent of the account, so accounts that never set members keep
working as before. An agent also sees any conversation assigned to them (a team's round-robin may give one of
an inbox they are not in: they can always open what they are asked to handle). The rule is a `Q` of three EXISTS subqueries, so a list or a count that applies it costs no
extra query.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet

from helpdesk.models import Inbox, InboxMember, Membership


def visible_conversations_q(*, account_id: int, user: Any | None, prefix: str = "") -> Q:
    """The conversations `user` may see, as a filter on Conversation (`prefix` "conversation__" filters a
    model that points at one). `user` None: no person is asking (a task, the AI's tools): no restriction."""
    if user is None:
        return Q()
    inbox = OuterRef(f"{prefix}inbox_id")
    assigned = Q(**{f"{prefix}assignee_id": user.pk})
    admin = Exists(
        Membership.objects.filter(account_id=account_id, user_id=user.pk, role=Membership.Role.ADMIN)
    )
    staffed = Exists(InboxMember.objects.filter(inbox_id=inbox))
    member = Exists(InboxMember.objects.filter(inbox_id=inbox, user_id=user.pk))
    return Q(admin) | ~Q(staffed) | Q(member) | assigned


def hidden_inboxes(*, account_id: int, user_id: int) -> QuerySet[Inbox]:
    """The account's inboxes whose conversations the person does not see (a lazy queryset: used as a subquery
    it costs no query of its own)."""
    admin = Exists(
        Membership.objects.filter(account_id=account_id, user_id=user_id, role=Membership.Role.ADMIN)
    )
    staffed = Exists(InboxMember.objects.filter(inbox_id=OuterRef("pk")))
    member = Exists(InboxMember.objects.filter(inbox_id=OuterRef("pk"), user_id=user_id))
    return Inbox.objects.filter(account_id=account_id).filter(~Q(admin) & Q(staffed) & ~Q(member))


def hidden_inbox_ids(*, account_id: int, user_id: int) -> set[int]:
    """The ids of `hidden_inboxes` (one query): the live event stream drops their events. Asked this way round,
    an inbox created after the stream opened has no members yet and is not hidden, as the rule says."""
    return set(hidden_inboxes(account_id=account_id, user_id=user_id).values_list("id", flat=True))
