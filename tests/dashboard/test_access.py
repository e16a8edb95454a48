"""Sign-in, the account switcher, and who may open what: members only (others 404), admin pages 403 for
agents, CSRF on every form."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import ConversationFactory, MembershipFactory, UserFactory

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db


def test_anonymous_visitors_are_sent_to_the_sign_in_page(client, team):
    url = f"/app/accounts/{team.account.id}/lists/needs-people/"
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"] == f"/auth/login/?next={url}"


def test_sign_in_lands_on_the_needs_people_list_of_the_first_account(client, team):
    assert client.get("/auth/login/").status_code == 200
    response = client.post("/auth/login/", {"username": "bob", "password": PASSWORD}, follow=True)
    assert response.redirect_chain[-1][0] == f"/app/accounts/{team.account.id}/lists/needs-people/"
    assert b"Needs people" in response.content


def test_wrong_password_is_refused(client, team):
    response = client.post("/auth/login/", {"username": "bob", "password": "nope"})
    assert response.status_code == 200
    assert b"didn&#x27;t match" in response.content or b"didn't match" in response.content
    assert "_auth_user_id" not in client.session


def test_sign_out_is_a_post(agent_client):
    assert agent_client.post("/auth/logout/").status_code == 200
    assert "_auth_user_id" not in agent_client.session


def test_user_in_no_account_is_told_so(client, db):
    client.force_login(UserFactory())
    response = client.get("/app/")
    assert response.status_code == 403
    assert b"not a member of any account" in response.content


def test_switcher_lists_every_account_of_the_user_and_remembers_the_choice(agent_client, team, other_team):
    MembershipFactory(account=other_team.account, user=team.agent)
    page = agent_client.get(f"/app/accounts/{team.account.id}/lists/ai/")
    assert b"Acme" in page.content and b"Globex" in page.content
    response = agent_client.get(f"/app/switch/?account={other_team.account.id}", follow=True)
    assert response.redirect_chain[-1][0] == f"/app/accounts/{other_team.account.id}/lists/needs-people/"
    # The next visit to /app/ returns to the account chosen last.
    assert agent_client.get("/app/")["Location"].startswith(f"/app/accounts/{other_team.account.id}/")


def test_switching_to_an_account_the_user_is_not_in_answers_404(agent_client, other_team):
    response = agent_client.get(f"/app/switch/?account={other_team.account.id}", follow=True)
    assert response.status_code == 404


OTHER_ACCOUNT_GETS = [
    "lists/needs-people/",
    "conversations/{cid}/",
    "conversations/{cid}/poll/",
    "conversations/{cid}/runs/",
    "playground/",
    "usage/",
]
CONVERSATION_POSTS = [
    ("reply/", {"content": "hi", "kind": "reply"}),
    ("status/take_over/", {}),
    ("status/hand_back/", {}),
    ("status/resolve/", {}),
    ("status/reopen/", {}),
    ("assignee/", {"assignee": ""}),
    ("labels/", {"name": "vip"}),
    ("priority/", {"priority": "high"}),
]


@pytest.mark.parametrize("path", OTHER_ACCOUNT_GETS)
def test_other_accounts_pages_answer_404(admin_client, other_team, path):
    conversation = ConversationFactory(contact_inbox__inbox=other_team.inbox)
    url = f"/app/accounts/{other_team.account.id}/" + path.format(cid=conversation.id)
    assert admin_client.get(url).status_code == 404


@pytest.mark.parametrize(("path", "data"), CONVERSATION_POSTS)
def test_other_accounts_conversations_answer_404_to_every_action(admin_client, team, other_team, path, data):
    conversation = ConversationFactory(contact_inbox__inbox=other_team.inbox, status="open")
    before = (conversation.status, conversation.priority, conversation.messages.count())
    # Through the caller's own account id too: the conversation id alone must not reach another tenant.
    for account_id in (team.account.id, other_team.account.id):
        url = f"/app/accounts/{account_id}/conversations/{conversation.id}/{path}"
        assert admin_client.post(url, data).status_code == 404
    conversation.refresh_from_db()
    assert (conversation.status, conversation.priority, conversation.messages.count()) == before
    assert conversation.labels.count() == 0


@pytest.mark.parametrize("path", ["playground/", "usage/", "conversations/{cid}/runs/"])
def test_agents_cannot_open_admin_pages(agent_client, team, path):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    url = f"/app/accounts/{team.account.id}/" + path.format(cid=conversation.id)
    assert agent_client.get(url).status_code == 403


def test_agents_see_no_links_to_admin_pages(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    page = agent_client.get(f"/app/accounts/{team.account.id}/conversations/{conversation.id}/").content
    assert b"/runs/" not in page and b"debug log" not in page.lower()
    assert b"/playground/" not in page and b"/usage/" not in page


def test_admins_see_the_links(admin_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    page = admin_client.get(f"/app/accounts/{team.account.id}/conversations/{conversation.id}/").content
    assert f"/conversations/{conversation.id}/runs/".encode() in page
    assert b"/playground/" in page and b"/usage/" in page


@pytest.mark.parametrize(("path", "data"), CONVERSATION_POSTS)
def test_every_conversation_form_needs_a_csrf_token(team, path, data):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    client = Client(enforce_csrf_checks=True)
    client.force_login(team.agent)
    url = f"/app/accounts/{team.account.id}/conversations/{conversation.id}/{path}"
    assert client.post(url, data).status_code == 403
    assert conversation.messages.count() == 0


def test_playground_form_needs_a_csrf_token(team):
    client = Client(enforce_csrf_checks=True)
    client.force_login(team.admin)
    assert client.post(f"/app/accounts/{team.account.id}/playground/", {"reset": "1"}).status_code == 403


def test_every_rendered_form_carries_a_csrf_token(admin_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    html = admin_client.get(f"/app/accounts/{team.account.id}/conversations/{conversation.id}/").content
    assert html.count(b'method="post"') == html.count(b"csrfmiddlewaretoken")
    assert html.count(b'method="post"') >= 6
