"""Dashboard pages with an id beyond a 64-bit primary key are the ordinary "Not found" page, never a 500."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

OUT_OF_RANGE = [pytest.param(2**63, id="2**63"), pytest.param(2**64, id="2**64")]


@pytest.mark.parametrize("big", OUT_OF_RANGE)
@pytest.mark.parametrize(
    "route",
    [
        "/app/accounts/{big}/lists/needs-people/",
        "/app/accounts/{account}/conversations/{big}/",
        "/app/accounts/{account}/attachments/{big}/",
        "/app/accounts/{account}/conversations/{big}/runs/",
        "/app/accounts/{account}/copilot/runs/{big}/",
    ],
)
def test_an_id_beyond_64_bits_in_a_dashboard_url_is_a_404_page(admin_client, team, route, big):
    response = admin_client.get(route.format(account=team.account.id, big=big))

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
