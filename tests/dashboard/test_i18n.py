"""The dashboard's language: a person's own choice (top bar, REST API) wins over the browser's Accept-Language,
which wins over the server's English; the choice is the person's, the same in every account they belong to, and
costs no query per page."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from helpdesk.models import Membership, PersonSettings
from tests.factories import (
    AccountFactory,
    ContactFactory,
    ConversationFactory,
    MembershipFactory,
    MessageFactory,
)

from .conftest import count_queries

pytestmark = pytest.mark.django_db

CHINESE_BROWSER = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9,en;q=0.5"}
ENGLISH_BROWSER = {"HTTP_ACCEPT_LANGUAGE": "en-GB,en;q=0.9"}


def canned_page(team) -> str:
    return f"/app/accounts/{team.account.id}/canned-responses/"


def reports_page(team) -> str:
    return f"/app/accounts/{team.account.id}/reports/"


def assert_chinese(html: str) -> None:
    assert '<html lang="zh-hans">' in html
    # The top bar and the page in Chinese, none of their English left.
    for chinese in ("联系人", "快捷回复", "退出登录", "键盘快捷键", "全部标为已读"):
        assert chinese in html, chinese
    for english in (
        ">Contacts<",
        ">Canned responses<",
        ">Sign out<",
        ">Keyboard shortcuts<",
        ">Mark all read<",
    ):
        assert english not in html, english


def assert_english(html: str) -> None:
    assert '<html lang="en">' in html
    assert ">Canned responses<" in html and ">Sign out<" in html
    assert "快捷回复" not in html


def test_a_person_who_chose_chinese_reads_the_dashboard_in_chinese(agent_client, team):
    PersonSettings.objects.create(user=team.agent, language="zh-hans")
    response = agent_client.get(canned_page(team), **ENGLISH_BROWSER)
    assert response.status_code == 200
    assert response["Content-Language"] == "zh-hans"
    assert_chinese(response.content.decode())


def test_a_browser_asking_for_chinese_gets_chinese_when_the_person_chose_nothing(agent_client, team):
    html = agent_client.get(canned_page(team), **CHINESE_BROWSER).content.decode()
    assert_chinese(html)
    assert '<option value="" selected>跟随浏览器</option>' in html


def test_without_a_choice_or_a_chinese_browser_it_is_english(agent_client, team):
    assert_english(agent_client.get(canned_page(team), **ENGLISH_BROWSER).content.decode())
    assert_english(agent_client.get(canned_page(team)).content.decode())


def test_the_persons_english_wins_over_a_chinese_browser(agent_client, team):
    PersonSettings.objects.create(user=team.agent, language="en")
    assert_english(agent_client.get(canned_page(team), **CHINESE_BROWSER).content.decode())


def test_role_labels_counts_and_durations_are_translated(admin_client, team):
    PersonSettings.objects.create(user=team.admin, language="zh-hans")
    html = admin_client.get(reports_page(team), {"start": "2026-01-01", "end": "2026-01-31"}).content.decode()
    assert "管理员" in html and "Administrator" not in html  # the role next to the name
    assert "报表" in html and "客户满意度" in html and "5 星" in html
    assert "Customer satisfaction" not in html and "5 stars" not in html


def test_the_sign_in_page_follows_the_browser(client):
    html = client.get("/auth/login/", **CHINESE_BROWSER).content.decode()
    assert "<h1>登录</h1>" in html and "用户名" in html and "Username" not in html
    assert "<h1>Sign in</h1>" in client.get("/auth/login/", **ENGLISH_BROWSER).content.decode()


def test_the_top_bar_switch_stores_the_choice_and_the_next_page_speaks_it(agent_client, team):
    response = agent_client.post(
        "/app/language/", {"language": "zh-hans", "next": canned_page(team)}, **ENGLISH_BROWSER
    )
    assert response.status_code == 302 and response["Location"] == canned_page(team)
    assert PersonSettings.objects.get(user=team.agent).language == "zh-hans"
    html = agent_client.get(canned_page(team), **ENGLISH_BROWSER).content.decode()
    assert_chinese(html)
    assert "工作台已切换为你选择的语言。" in html
    assert '<option value="zh-hans" lang="zh-hans" selected>简体中文</option>' in html
    # Back to the browser's language: nothing chosen any more.
    agent_client.post("/app/language/", {"language": "", "next": canned_page(team)})
    assert PersonSettings.objects.get(user=team.agent).language == ""
    assert_english(agent_client.get(canned_page(team), **ENGLISH_BROWSER).content.decode())


def test_an_unknown_language_is_refused_and_nothing_changes(agent_client, team):
    PersonSettings.objects.create(user=team.agent, language="zh-hans")
    response = agent_client.post("/app/language/", {"language": "fr", "next": canned_page(team)}, follow=True)
    assert "请选择 English、简体中文或跟随浏览器语言。" in response.content.decode()
    assert PersonSettings.objects.get(user=team.agent).language == "zh-hans"


def test_the_switch_never_sends_the_person_to_another_site(agent_client):
    response = agent_client.post("/app/language/", {"language": "en", "next": "https://evil.example/"})
    assert response.status_code == 302 and response["Location"] == "/app/"


def test_the_switch_needs_a_signed_in_person(client, team):
    response = client.post("/app/language/", {"language": "zh-hans"})
    assert response.status_code == 302 and response["Location"].startswith("/auth/login/")
    assert not PersonSettings.objects.exists()


def test_the_choice_is_the_same_in_every_account_of_the_person(agent_client, team):
    second = AccountFactory(name="Second shop")
    MembershipFactory(account=second, user=team.agent, role=Membership.Role.AGENT)
    agent_client.post("/app/language/", {"language": "zh-hans"})
    html = agent_client.get(
        f"/app/accounts/{second.id}/canned-responses/", **ENGLISH_BROWSER
    ).content.decode()
    assert_chinese(html)


def test_the_choice_costs_no_query_per_page(client, team):
    """Read once per session, then kept in it: a page costs as many queries as for a person who chose nothing."""
    PersonSettings.objects.create(user=team.agent, language="zh-hans")
    client.force_login(team.admin)
    client.get(canned_page(team))  # warm the session
    without_choice, _ = count_queries(lambda: client.get(canned_page(team)))
    client.force_login(team.agent)
    client.get(canned_page(team))
    with_choice, response = count_queries(lambda: client.get(canned_page(team)))
    assert "快捷回复" in response.content.decode()
    assert with_choice <= without_choice


def test_a_session_of_someone_else_does_not_keep_the_previous_persons_language(client, team):
    PersonSettings.objects.create(user=team.agent, language="zh-hans")
    client.force_login(team.agent)
    assert "快捷回复" in client.get(canned_page(team)).content.decode()
    client.force_login(team.admin)
    assert_english(client.get(canned_page(team), **ENGLISH_BROWSER).content.decode())


def test_the_rest_api_reads_and_sets_the_persons_language(team):
    api = APIClient()
    api.force_authenticate(team.agent)
    assert api.get("/api/v1/me/settings/").json() == {"language": ""}
    response = api.patch("/api/v1/me/settings/", {"language": "zh-hans"}, format="json")
    assert response.status_code == 200 and response.json() == {"language": "zh-hans"}
    assert PersonSettings.objects.get(user=team.agent).language == "zh-hans"
    assert api.get("/api/v1/me/settings/").json() == {"language": "zh-hans"}


def test_the_rest_api_refuses_an_unknown_language_and_stores_nothing(team):
    api = APIClient()
    api.force_authenticate(team.agent)
    response = api.patch("/api/v1/me/settings/", {"language": "klingon"}, format="json")
    assert response.status_code == 400 and "language" in response.json()
    assert not PersonSettings.objects.exists()
    assert APIClient().get("/api/v1/me/settings/").status_code in (401, 403)


def test_the_conversation_list_and_page_speak_chinese(agent_client, team):

    PersonSettings.objects.create(user=team.agent, language="zh-hans")
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    MessageFactory(conversation=conversation, content="我的订单还没到")
    listing = agent_client.get(f"/app/accounts/{team.account.id}/lists/needs-people/").content.decode()
    assert "待人工处理" in listing and "全部收件箱" in listing and "应用到已勾选" in listing
    assert "All inboxes" not in listing and "Apply to the ticked" not in listing
    page = agent_client.get(
        f"/app/accounts/{team.account.id}/conversations/{conversation.id}/"
    ).content.decode()
    assert "发送回复" in page and "内部备注" in page and "分配给我" in page and "快捷回复" in page
    assert ">Send reply<" not in page and "Type your message" not in page
    assert 'data-msg-delivery-sent="已发送"' in page  # what the page's scripts write, from the catalog


def test_the_contacts_pages_speak_chinese(admin_client, team):

    PersonSettings.objects.create(user=team.admin, language="zh-hans")
    contact = ContactFactory(account=team.account, name="王小明")
    listing = admin_client.get(f"/app/accounts/{team.account.id}/contacts/").content.decode()
    assert (
        "搜索联系人" in listing
        and "导出全部联系人（CSV）" in listing
        and "Export all contacts" not in listing
    )
    page = admin_client.get(f"/app/accounts/{team.account.id}/contacts/{contact.id}/").content.decode()
    assert "把重复的联系人合并到此联系人" in page and "Merge a duplicate" not in page
