"""The bell, the notifications page and marking read (helpdesk.views.notifications, helpdesk.api.notifications):
each person sees and changes only their own notifications of the account in the URL; anything else is 404."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from helpdesk.models import Membership, Notification
from tests.factories import ConversationFactory, MembershipFactory

pytestmark = [pytest.mark.django_db]


def notify(account, user, text, *, inbox, read=False):
    conversation = ConversationFactory(contact_inbox__inbox=inbox)
    return Notification.objects.create(
        account=account,
        user=user,
        kind=Notification.Kind.MENTION,
        conversation=conversation,
        text=text,
        read_at=timezone.now() if read else None,
    )


@pytest.fixture
def seeded(team, other_team):
    # bob (the agent) is also a member of the other account: his notifications there stay there.
    MembershipFactory(account=other_team.account, user=team.agent)
    mine = notify(team.account, team.agent, "Mine: unread", inbox=team.inbox)
    read = notify(team.account, team.agent, "Mine: already read", read=True, inbox=team.inbox)
    colleague = notify(team.account, team.admin, "Alice's own", inbox=team.inbox)
    elsewhere = notify(other_team.account, team.agent, "Bob in Globex", inbox=other_team.inbox)
    return {"mine": mine, "read": read, "colleague": colleague, "elsewhere": elsewhere}


def main(response) -> str:
    """The page's own content, without the top bar's bell."""
    assert response.status_code == 200
    return response.content.decode().split("<main>", 1)[1]


def url(name, account, *args):
    return reverse(f"dashboard:{name}", args=[account.id, *args])


def test_the_bell_on_every_account_page_shows_my_unread_count_and_items_only(agent_client, team, seeded):
    page = agent_client.get(url("conversation-list", team.account, "mine")).content.decode()
    assert 'data-notif-count aria-label="unread">1<' in page
    assert "Mine: unread" in page and "Mine: already read" in page
    assert "Alice's own" not in page and "Bob in Globex" not in page
    assert url("conversation-detail", team.account, seeded["mine"].conversation_id) in page


def test_the_list_page_is_mine_in_this_account(agent_client, team, other_team, seeded):
    page = main(agent_client.get(url("notifications", team.account)))
    assert "Mine: unread" in page and "Mine: already read" in page
    assert "Alice's own" not in page and "Bob in Globex" not in page
    unread = main(agent_client.get(url("notifications", team.account) + "?unread=1"))
    assert "Mine: unread" in unread and "Mine: already read" not in unread


def test_a_non_member_gets_404(client, team, other_team, seeded):
    client.force_login(other_team.admin)
    assert client.get(url("notifications", team.account)).status_code == 404
    assert client.post(url("notification-read", team.account, seeded["mine"].id)).status_code == 404
    assert client.post(url("notifications-read-all", team.account)).status_code == 404


def test_mark_one_read_is_a_post_for_my_own_notification_only(agent_client, team, other_team, seeded):
    read_url = url("notification-read", team.account, seeded["mine"].id)
    assert agent_client.get(read_url).status_code == 405
    response = agent_client.post(read_url, HTTP_ACCEPT="application/json")
    assert response.status_code == 200 and response.json()["unread"] == 0
    seeded["mine"].refresh_from_db()
    assert seeded["mine"].read_at is not None
    # A colleague's notification, and mine of another account through this account's URL: 404, unchanged.
    assert (
        agent_client.post(url("notification-read", team.account, seeded["colleague"].id)).status_code == 404
    )
    assert (
        agent_client.post(url("notification-read", team.account, seeded["elsewhere"].id)).status_code == 404
    )
    assert Notification.objects.get(pk=seeded["colleague"].pk).read_at is None
    assert Notification.objects.get(pk=seeded["elsewhere"].pk).read_at is None


def test_mark_all_read_leaves_colleagues_and_other_accounts_alone(agent_client, team, seeded):
    notify(team.account, team.agent, "Another one", inbox=team.inbox)
    response = agent_client.post(url("notifications-read-all", team.account), {"next": "/app/"})
    assert response.status_code == 302 and response["Location"] == "/app/"
    assert not Notification.objects.filter(
        account=team.account, user=team.agent, read_at__isnull=True
    ).exists()
    assert Notification.objects.get(pk=seeded["colleague"].pk).read_at is None
    assert Notification.objects.get(pk=seeded["elsewhere"].pk).read_at is None


def test_next_never_leaves_the_site(agent_client, team, seeded):
    response = agent_client.post(
        url("notification-read", team.account, seeded["mine"].id), {"next": "https://evil.example/"}
    )
    assert response["Location"] == url("notifications", team.account)


def test_writes_need_the_csrf_token(team, seeded):
    client = Client(enforce_csrf_checks=True)
    client.force_login(team.agent)
    assert client.post(url("notification-read", team.account, seeded["mine"].id)).status_code == 403
    assert client.post(url("notifications-read-all", team.account)).status_code == 403
    assert Notification.objects.get(pk=seeded["mine"].pk).read_at is None


def test_i_can_turn_my_own_emails_off_and_on(agent_client, team, other_team, seeded):
    email_url = url("notifications-email", team.account)
    assert agent_client.post(email_url, {"email": "off"}).status_code == 302
    assert not Membership.objects.get(account=team.account, user=team.agent).email_notifications
    assert Membership.objects.get(account=other_team.account, user=team.agent).email_notifications
    assert "Also e-mail me" in agent_client.get(url("notifications", team.account)).content.decode()
    agent_client.post(email_url, {"email": "on"})
    assert Membership.objects.get(account=team.account, user=team.agent).email_notifications


def api(account, name, *args):
    return reverse(f"helpdesk-api:{name}", args=[account.id, *args])


def test_the_api_lists_counts_and_marks_my_own_only(agent_client, team, other_team, seeded):
    listed = agent_client.get(api(team.account, "notification-list")).json()
    assert [n["text"] for n in listed["results"]] == ["Mine: already read", "Mine: unread"]  # newest first
    assert listed["results"][1]["url"] == url(
        "conversation-detail", team.account, seeded["mine"].conversation_id
    )
    unread = agent_client.get(api(team.account, "notification-list") + "?unread=true").json()
    assert [n["id"] for n in unread["results"]] == [seeded["mine"].id]
    assert agent_client.get(api(team.account, "notification-unread-count")).json() == {"unread": 1}
    assert (
        agent_client.post(api(team.account, "notification-read", seeded["colleague"].id)).status_code == 404
    )
    assert (
        agent_client.post(api(team.account, "notification-read", seeded["elsewhere"].id)).status_code == 404
    )
    done = agent_client.post(api(team.account, "notification-read", seeded["mine"].id)).json()
    assert done["read_at"] is not None
    assert agent_client.post(api(team.account, "notification-read-all")).json() == {"unread": 0}
    assert Notification.objects.get(pk=seeded["elsewhere"].pk).read_at is None
    # Globex's list for bob holds only Globex's notification.
    globex = agent_client.get(api(other_team.account, "notification-list")).json()
    assert [n["text"] for n in globex["results"]] == ["Bob in Globex"]


def test_a_conversation_opened_from_a_notification_offers_the_way_back(agent_client, team, seeded):
    conversation_url = url("conversation-detail", team.account, seeded["mine"].conversation_id)
    # The bell (on a list page) and the notifications page link to the conversation with where they are.
    listed = url("conversation-list", team.account, "mine") + "?q=refund"
    bell = agent_client.get(listed).content.decode()
    assert (
        f'{conversation_url}?from=%2Fapp%2Faccounts%2F{team.account.id}%2Flists%2Fmine%2F%3Fq%3Drefund"'
        in bell
    )
    page = main(agent_client.get(url("notifications", team.account)))
    from_page = f"{conversation_url}?from=%2Fapp%2Faccounts%2F{team.account.id}%2Fnotifications%2F"
    assert from_page in page

    opened = main(agent_client.get(from_page))
    assert f'<a href="{url("notifications", team.account)}" class="back-to-origin" data-came-from>' in opened
    # Opened otherwise (a bookmark, the list), or with somewhere that is not a page of this site: no such link.
    for elsewhere in (
        "",
        "?from=https://evil.example/",
        "?from=//evil.example/x",
        "?from=javascript:alert(1)",
    ):
        assert "data-came-from" not in main(agent_client.get(conversation_url + elsewhere)), elsewhere
