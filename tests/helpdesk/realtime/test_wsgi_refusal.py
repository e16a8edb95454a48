"""Under a WSGI server (config.wsgi, the test client) a stream cannot stream: Django would buffer it whole while
holding a thread. The account's stream answers 204 (EventSource stops, pages poll) after the same access
checks as under ASGI."""

from __future__ import annotations

import pytest

from helpdesk.models import Membership
from tests.factories import AccountFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_the_stream_refuses_wsgi_after_checking_access(client):
    acme, globex = AccountFactory(), AccountFactory()
    alice, mallory = UserFactory(username="alice"), UserFactory(username="mallory")
    MembershipFactory(account=acme, user=alice, role=Membership.Role.AGENT)
    MembershipFactory(account=globex, user=mallory, role=Membership.Role.AGENT)
    url = f"/app/accounts/{acme.id}/events/"
    assert client.get(url).status_code == 302
    client.force_login(mallory)
    assert client.get(url).status_code == 404
    client.force_login(alice)
    response = client.get(url)
    assert response.status_code == 204  # EventSource stops without an error; the page polls
