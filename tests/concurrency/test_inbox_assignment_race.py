"""Two places free up at the same moment (two people come online together, each a member of the same inbox):
each waiting conversation goes to exactly one of them, and nobody goes past their capacity. Real threads, each
on its own PostgreSQL connection, started together at a barrier (helpdesk.services.assignment.assign_waiting:
the membership row lock, SKIP LOCKED on the waiting rows, the conditional update)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from helpdesk.models import Conversation, InboxMember
from helpdesk.services.assignment import assign_waiting
from tests.factories import AccountFactory, ConversationFactory, InboxFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_people_coming_online_together_never_share_a_conversation():
    account = AccountFactory()
    inbox = InboxFactory(account=account, auto_assign=True)
    people = []
    for name in ("ann", "ben", "cat", "dan"):
        user = UserFactory(username=name)
        MembershipFactory(account=account, user=user, max_open_assignments=2)
        InboxMember.objects.create(inbox=inbox, user=user)
        people.append(user)
    rows = [
        ConversationFactory(
            contact_inbox__inbox=inbox,
            status=Conversation.Status.OPEN,
            waiting_since=timezone.now() - timedelta(minutes=minutes),
        )
        for minutes in range(1, 7)
    ]
    barrier = threading.Barrier(len(people) * 2)
    given: list[list[int]] = []
    errors: list[BaseException] = []

    def free_a_place(user_id: int) -> None:
        try:
            barrier.wait(10)
            given.append(assign_waiting(account_id=account.id, user_id=user_id))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    # Each person's place is announced twice at once (say, online from two tabs): still at most 2 each.
    threads = [threading.Thread(target=free_a_place, args=(p.pk,)) for p in people for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert errors == []
    handed = [cid for batch in given for cid in batch]
    assert len(handed) == len(set(handed)) == len(rows)  # every one given, none twice
    for user in people:
        assert Conversation.objects.filter(assignee=user).count() <= 2
    assert not Conversation.objects.filter(pk__in=[r.pk for r in rows], assignee__isnull=True).exists()
