"""Copilot fixtures: an account whose inbox an assistant answers, an agent and an administrator of it, another
account, a real redis-server for the live channel and the scripted model server over real HTTP."""

from __future__ import annotations

import pytest

from captain.answering.services import live
from captain.knowledge.services.knowledge_search import knowledge_cache_clear
from helpdesk.models import Membership
from tests.factories import (
    AccountFactory,
    AssistantInboxFactory,
    ConversationFactory,
    MembershipFactory,
    UserFactory,
)


@pytest.fixture
def live_redis(redis_url, settings):
    settings.REDIS_URL = redis_url
    live._client.cache_clear()
    live._subscriber_client.cache_clear()
    yield redis_url
    live._client.cache_clear()
    live._subscriber_client.cache_clear()


@pytest.fixture
def acme(db, live_redis, llm_settings):
    knowledge_cache_clear()
    link = AssistantInboxFactory(assistant__account__name="Acme")
    account = link.assistant.account
    agent = UserFactory(username="bob", first_name="Bob")
    admin = UserFactory(username="alice", first_name="Alice")
    MembershipFactory(account=account, user=agent, role=Membership.Role.AGENT)
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
    yield {
        "account": account,
        "assistant": link.assistant,
        "inbox": link.inbox,
        "agent": agent,
        "admin": admin,
        "conversation": conversation,
        "model": llm_settings,
    }
    knowledge_cache_clear()


@pytest.fixture
def other(db):
    """Another account with its own administrator (who must never reach Acme's copilot)."""
    account = AccountFactory(name="Globex")
    admin = UserFactory(username="mallory")
    MembershipFactory(account=account, user=admin, role=Membership.Role.ADMIN)
    return {"account": account, "admin": admin}
