"""Setting up a widget inbox in the admin: allowed origins are checked, and the page shows the one script tag."""

from __future__ import annotations

import pytest

from helpdesk.models import Inbox
from tests.factories import AccountFactory

pytestmark = pytest.mark.django_db


def add_widget(admin_client, origins: str):
    return admin_client.post(
        "/admin/helpdesk/inbox/add/",
        {
            "account": AccountFactory().pk,
            "name": "Website",
            "channel_type": "widget",
            "provider_config": "{}",
            "widget_allowed_origins": origins,
        },
    )


def test_a_widget_inbox_shows_its_script_tag_and_keeps_its_origins(admin_client, settings):
    settings.PUBLIC_BASE_URL = "https://help.example.com"

    response = add_widget(admin_client, "https://shop.example https://www.shop.example")

    assert response.status_code == 302, response.content.decode()[:2000]
    inbox = Inbox.objects.get(name="Website")
    assert inbox.provider_config == {"allowed_origins": "https://shop.example https://www.shop.example"}
    html = admin_client.get(f"/admin/helpdesk/inbox/{inbox.pk}/change/").content.decode()
    assert (
        '&lt;script src="https://help.example.com/static/helpdesk/widget/widget.js" '
        f'data-website-token="{inbox.webhook_token}" async&gt;&lt;/script&gt;'
    ) in html
    # The generated identity secret is shown once, right after creation, and never again.
    assert f"shown only now): {inbox.secret}" in html
    assert inbox.secret not in admin_client.get(f"/admin/helpdesk/inbox/{inbox.pk}/change/").content.decode()


@pytest.mark.parametrize("origins", ["shop.example", "https://shop.example/path", "javascript:alert(1)"])
def test_an_allowed_origin_that_is_no_origin_is_refused(admin_client, origins):
    response = add_widget(admin_client, origins)
    assert response.status_code == 200
    assert "not an origin" in response.content.decode()
    assert not Inbox.objects.filter(name="Website").exists()
