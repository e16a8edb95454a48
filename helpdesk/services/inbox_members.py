"""Who looks after an inbox (helpdesk.models.InboxMember): told of its escalations that no team picks up
(helpdesk.services.notifications). Later work may read the same membership for visibility and assignment.

The rule lives here, not in the admin or an API: an inbox's members are people of the inbox's account. Anyone
else is refused with `ValidationError({"members": [message]})` naming the user, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from helpdesk.models import Inbox, InboxMember, Membership
from helpdesk.services.audit import audit_rows_created

MAX_INBOX_MEMBERS = 500


def inbox_member_outsiders(*, account_id: int, users: Iterable[User]) -> list[User]:
    """Those of `users` who are not members of the account (the admin's rows and the service share the rule)."""
    chosen = list(users)
    in_account = set(
        Membership.objects.filter(account_id=account_id, user_id__in=[u.pk for u in chosen]).values_list(
            "user_id", flat=True
        )
    )
    return [user for user in chosen if user.pk not in in_account]


@transaction.atomic
def inbox_members_set(*, inbox: Inbox, users: Iterable[User]) -> list[int]:
    """Make `users` the inbox's members: keep those who stay, add the new ones, remove the others. Returns the
    members' user ids in the order given."""
    chosen = list({user.pk: user for user in users}.values())
    if len(chosen) > MAX_INBOX_MEMBERS:
        raise ValidationError({"members": [f"An inbox has at most {MAX_INBOX_MEMBERS} members."]})
    ids = [user.pk for user in chosen]
    in_account = set(
        Membership.objects.filter(account_id=inbox.account_id, user_id__in=ids).values_list(
            "user_id", flat=True
        )
    )
    outsiders = [user.get_username() for user in chosen if user.pk not in in_account]
    if outsiders:
        raise ValidationError(
            {"members": [f"Not people of the inbox's account: {', '.join(sorted(outsiders))}."]}
        )
    InboxMember.objects.filter(inbox=inbox).exclude(user_id__in=ids).delete()
    present = set(InboxMember.objects.filter(inbox=inbox).values_list("user_id", flat=True))
    added = InboxMember.objects.bulk_create(
        [InboxMember(inbox=inbox, user_id=user_id) for user_id in ids if user_id not in present]
    )
    audit_rows_created(added)  # bulk_create sends no signal
    return ids
