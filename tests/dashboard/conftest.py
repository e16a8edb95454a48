"""Fixtures for the dashboard tests: one account with an admin and an agent, another tenant, and helpers to
build conversations with threads of every kind."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.db import connection
from django.utils import translation

from helpdesk.models import Account, Inbox, Membership
from tests.factories import AccountFactory, InboxFactory, MembershipFactory, UserFactory


@pytest.fixture(autouse=True)
def _server_language_after_each_test():
    """A request of a Chinese person leaves Chinese active in the thread (LocaleMiddleware activates, nothing
    deactivates), so a later test calling a service directly would read its messages in Chinese."""
    yield
    translation.deactivate()


PASSWORD = "pass-word-123"


@dataclass
class Team:
    account: Account
    inbox: Inbox
    admin: object
    agent: object


@pytest.fixture
def team(db) -> Team:
    account = AccountFactory(name="Acme")
    admin = UserFactory(username="alice")
    agent = UserFactory(username="bob")
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    MembershipFactory(account=account, user=agent, role=Membership.Role.AGENT)
    return Team(
        account=account, inbox=InboxFactory(account=account, name="Web chat"), admin=admin, agent=agent
    )


@pytest.fixture
def other_team(db) -> Team:
    account = AccountFactory(name="Globex")
    admin = UserFactory(username="mallory")
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    return Team(account=account, inbox=InboxFactory(account=account), admin=admin, agent=admin)


@pytest.fixture
def admin_client(client, team):
    client.force_login(team.admin)
    return client


@pytest.fixture
def agent_client(client, team):
    client.force_login(team.agent)
    return client


def count_queries(callable_) -> tuple[int, object]:
    """(SQL statements executed, result). An execute wrapper sees every statement, whatever the query log
    does at request boundaries."""
    executed: list[str] = []

    def record(execute, sql, params, many, context):
        executed.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        result = callable_()
    return len(executed), result
