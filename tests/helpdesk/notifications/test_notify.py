"""Who is told what (helpdesk.services.notifications): escalations, assignments and @mentions make one row per
person, a live event on the account's channel addressed to that person (real redis-server), and an e-mail
through Django's backend (the test backend's outbox), all after the commit, never another tenant's people."""

from __future__ import annotations

import json
import logging
import time

import pytest
import redis
from django.core import mail
from django.core.mail.backends.base import BaseEmailBackend
from django.db import transaction

from helpdesk.models import Membership, Notification, Team, TeamMember
from helpdesk.realtime.publish import account_channel
from helpdesk.services.conversations import conversation_assign, conversation_escalate
from helpdesk.services.messages import message_create_note
from helpdesk.services.notifications import mentioned_usernames
from tests.factories import AccountFactory, ConversationFactory, InboxFactory, MembershipFactory, UserFactory

pytestmark = [pytest.mark.django_db]


class BrokenBackend(BaseEmailBackend):
    """An SMTP server that is down, as Django's backend API sees it (the real SMTP backend needs a server)."""

    def send_messages(self, email_messages):
        raise ConnectionRefusedError("SMTP down")


def member(account, username, **membership):
    user = UserFactory(username=username)
    MembershipFactory(account=account, user=user, **membership)
    return user


@pytest.fixture
def acme():
    account = AccountFactory(name="Acme")
    people = {name: member(account, name) for name in ("alice", "bob", "carol")}
    conversation = ConversationFactory(
        contact_inbox__inbox=InboxFactory(account=account), contact_inbox__contact__name="Jane Doe"
    )
    return account, people, conversation


@pytest.fixture
def globex(acme):
    account = AccountFactory(name="Globex")
    mallory = member(account, "mallory")
    return account, mallory


@pytest.fixture
def events(redis_server, acme, globex):
    """Everything published on both accounts' channels, as (account_id, event)."""
    client = redis.Redis.from_url(redis_server.url)
    pubsub = client.pubsub()
    pubsub.subscribe(account_channel(acme[0].id), account_channel(globex[0].id))

    def drain(seconds: float = 0.4) -> list[tuple[int, dict]]:
        got, deadline = [], time.monotonic() + seconds
        while time.monotonic() < deadline:
            raw = pubsub.get_message(ignore_subscribe_messages=True, timeout=0.05)
            if raw and raw["type"] == "message":
                account_id = int(raw["channel"].decode().rsplit(":", 1)[1])
                got.append((account_id, json.loads(raw["data"])))
        return [(a, e) for a, e in got if e.get("type") == "notification"]

    drain(0.2)
    yield drain
    pubsub.close()


def rows(**filters):
    return list(Notification.objects.filter(**filters).order_by("id"))


def test_an_auto_assigned_escalation_tells_the_assignee_only(
    acme, globex, events, django_capture_on_commit_callbacks
):
    account, people, conversation = acme
    team = Team.objects.create(account=account, name="Billing")
    TeamMember.objects.create(team=team, user=people["bob"])
    TeamMember.objects.create(team=team, user=people["carol"])
    Membership.objects.filter(user=people["carol"]).update(availability=Membership.Availability.OFFLINE)

    with django_capture_on_commit_callbacks(execute=True):
        conversation_escalate(
            conversation=conversation, reason="Refund", customer_message="", team_id=team.id
        )
        assert mail.outbox == []  # nothing leaves before the commit

    (row,) = rows()
    assert row.user == people["bob"] and row.kind == Notification.Kind.ASSIGNED
    assert row.account_id == account.id and row.conversation_id == conversation.id
    assert f"#{conversation.id}" in row.text and "Jane Doe" in row.text
    ((account_id, event),) = events()
    assert account_id == account.id
    assert event["user_id"] == people["bob"].id and event["id"] == row.id and event["kind"] == "assigned"
    assert event["text"] == row.text
    assert event["url"] == f"/app/accounts/{account.id}/conversations/{conversation.id}/"
    (email,) = mail.outbox
    assert email.to == ["bob@example.com"]
    assert row.text in email.body and event["url"] in email.body
    assert "Jane Doe" in email.subject


def test_an_unassigned_escalation_tells_the_team_else_the_accounts_administrators(
    acme, globex, events, django_capture_on_commit_callbacks
):
    account, people, conversation = acme
    # A team that does not auto-assign: its members are told, whatever their availability.
    team = Team.objects.create(account=account, name="Returns", auto_assign=False)
    TeamMember.objects.create(team=team, user=people["carol"])
    TeamMember.objects.create(team=team, user=globex[1])  # someone who is not in the account: never told
    Membership.objects.filter(user=people["carol"]).update(availability=Membership.Availability.OFFLINE)
    with django_capture_on_commit_callbacks(execute=True):
        conversation_escalate(
            conversation=conversation, reason="Refund", customer_message="", team_id=team.id
        )
    assert [(n.user.username, n.kind) for n in rows()] == [("carol", "escalation")]
    assert [e["user_id"] for _, e in events()] == [people["carol"].id]

    # Without a team: the administrators (alice and bob), not every agent (carol), never everyone.
    Membership.objects.filter(user__in=[people["alice"], people["bob"]]).update(role=Membership.Role.ADMIN)
    other = ConversationFactory(contact_inbox__inbox=conversation.inbox)
    Notification.objects.all().delete()
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        conversation_escalate(conversation=other, reason="Question", customer_message="")
    assert sorted(n.user.username for n in rows()) == ["alice", "bob"]
    assert {n.kind for n in rows()} == {"escalation"}
    published = events()
    assert {a for a, _ in published} == {account.id}
    assert sorted(e["user_id"] for _, e in published) == sorted([people["alice"].id, people["bob"].id])
    assert sorted(m.to[0] for m in mail.outbox) == ["alice@example.com", "bob@example.com"]
    assert not rows(user=globex[1])


def test_email_only_for_people_who_want_it_and_have_an_address(acme, django_capture_on_commit_callbacks):
    _account, people, conversation = acme
    Membership.objects.filter(account=_account).update(role=Membership.Role.ADMIN)
    Membership.objects.filter(user=people["alice"]).update(email_notifications=False)
    people["carol"].email = ""
    people["carol"].save()
    with django_capture_on_commit_callbacks(execute=True):
        conversation_escalate(conversation=conversation, reason="Refund", customer_message="")
    assert len(rows()) == 3  # in the app: every administrator
    assert [m.to for m in mail.outbox] == [["bob@example.com"]]


def test_a_rolled_back_escalation_notifies_nobody(acme, events, django_capture_on_commit_callbacks):
    _account, _people, conversation = acme
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        conversation_escalate(conversation=conversation, reason="Refund", customer_message="")
        raise RuntimeError("the writer failed after notifying")
    assert rows() == [] and events() == [] and mail.outbox == []


def test_assigned_tells_the_assignee_unless_they_took_it_themselves(
    acme, events, django_capture_on_commit_callbacks
):
    _account, people, conversation = acme
    with django_capture_on_commit_callbacks(execute=True):
        conversation_assign(conversation=conversation, assignee=people["bob"], by=people["alice"])
    (row,) = rows()
    assert row.user == people["bob"] and row.kind == "assigned" and row.text.startswith("alice assigned")
    assert [e["user_id"] for _, e in events()] == [people["bob"].id]
    assert [m.to for m in mail.outbox] == [["bob@example.com"]]

    other = ConversationFactory(contact_inbox__inbox=conversation.inbox)
    with django_capture_on_commit_callbacks(execute=True):
        conversation_assign(conversation=other, assignee=people["carol"], by=people["carol"])
    assert len(rows()) == 1 and events() == [] and len(mail.outbox) == 1


def test_mentions_in_a_note_tell_members_but_never_the_author_or_another_account(
    acme, globex, events, django_capture_on_commit_callbacks
):
    account, people, conversation = acme
    text = "@Bob. can you check? cc @alice @mallory @nobody, mail carol@example.com"
    with django_capture_on_commit_callbacks(execute=True):
        message_create_note(conversation=conversation, content=text, user=people["alice"])
    (row,) = rows()
    assert row.user == people["bob"] and row.kind == "mention"
    assert row.text.startswith("alice mentioned you") and f"#{conversation.id}" in row.text
    assert [(a, e["user_id"]) for a, e in events()] == [(account.id, people["bob"].id)]
    assert [m.to for m in mail.outbox] == [["bob@example.com"]]


def test_mention_parsing():
    assert mentioned_usernames("hi @bob, @Carol. and @d.e-f+g") >= {"bob", "carol", "d.e-f+g"}
    assert mentioned_usernames("write to bob@example.com") == set()
    assert mentioned_usernames("no mention here") == set()


def test_an_email_failure_is_logged_and_never_fails_the_writer(
    acme, settings, caplog, django_capture_on_commit_callbacks
):
    settings.EMAIL_BACKEND = f"{__name__}.BrokenBackend"
    _account, people, conversation = acme
    with (
        caplog.at_level(logging.WARNING, logger="helpdesk.services.notifications"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        conversation_assign(conversation=conversation, assignee=people["bob"], by=people["alice"])
    conversation.refresh_from_db()
    assert conversation.assignee == people["bob"]
    assert len(rows()) == 1
    assert "not sent" in caplog.text and "ConnectionRefusedError" in caplog.text
    assert "bob@example.com" not in caplog.text
