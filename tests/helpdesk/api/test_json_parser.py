"""The REST API's JSON parser refuses what the webhooks refuse: too deep, NaN/Infinity; never a 500."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.factories import ConversationFactory, MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"[" * 5000 + b"]" * 5000, id="recursion"),
        pytest.param(b'{"a": ' * 40 + b"1" + b"}" * 40, id="deeper-than-the-limit"),
        pytest.param(b'{"content": NaN}', id="NaN"),
    ],
)
def test_hostile_json_to_any_api_route_is_a_400(body):
    member = MembershipFactory()
    conversation = ConversationFactory(contact_inbox__inbox__account=member.account)
    api = APIClient()
    api.force_authenticate(member.user)

    response = api.generic(
        "POST",
        f"/api/v1/accounts/{member.account_id}/conversations/{conversation.id}/messages/",
        body,
        content_type="application/json",
    )

    assert response.status_code == 400
    if "[" in body.decode()[:1] or '{"a"' in body.decode()[:5]:
        assert "nested" in response.json()["detail"]  # refused for its depth, not by the serializer
