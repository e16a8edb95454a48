"""The captain app's builder pages follow the person's language like the helpdesk pages: a person who chose
Simplified Chinese reads the usage page and the "Test before launch" page in Chinese, nothing of their English
left; everyone else still reads English."""

from __future__ import annotations

import re

import pytest

from captain.evaluation.models import EvalRun
from captain.evaluation.services.imports import ParsedQuestion
from captain.evaluation.services.sets import eval_questions_add, eval_set_create
from helpdesk.models import PersonSettings
from tests.captain.answering.test_debug_log_actions import page as debug_log_page
from tests.captain.answering.test_debug_log_actions import scene  # noqa: F401  (the fixture, a run with every kind of step)
from tests.factories import AssistantFactory, AssistantInboxFactory, ConversationFactory, FaqEntryFactory

pytestmark = pytest.mark.django_db


def main(html: str) -> str:
    """The page's own content (the top bar is the helpdesk's, tested elsewhere)."""
    return html.split("<main>", 1)[1].split("</main>", 1)[0]


def visible_english(html: str) -> list[str]:
    """Runs of English words a reader sees (tags, attributes other than labels, and numbers removed)."""
    text = re.sub(r"<svg.*?</svg>", " ", html, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", text)
    return re.findall(r"[A-Za-z]{3,}(?: [A-Za-z]{2,})*", text)


def test_a_chinese_person_reads_the_usage_page_in_chinese(admin_client, team):
    PersonSettings.objects.create(user=team.admin, language="zh-hans")
    html = admin_client.get(f"/app/accounts/{team.account.id}/usage/").content.decode()
    page = main(html)
    for chinese in ("AI 用量", "每日额度", "按助手", "各助手的转人工与解决情况", "转人工率", "还没有用量。"):
        assert chinese in page, chinese
    assert visible_english(page) == []
    assert "<title>用量" in html


def test_a_chinese_person_reads_test_before_launch_in_chinese(admin_client, team):
    PersonSettings.objects.create(user=team.admin, language="zh-hans")
    AssistantFactory(account=team.account, name="Helper")
    html = admin_client.get(f"/app/accounts/{team.account.id}/evaluation/").content.decode()
    page = main(html)
    for chinese in (
        "上线前测试",
        "问题集",
        "还没有问题集：请在下面创建一个。",
        "新建问题集",
        'placeholder="上线检查"',
    ):
        assert chinese in page, chinese
    # The assistant's name is the builder's own text, shown as written.
    assert visible_english(page) == ["Helper"]


def test_a_chinese_person_reads_a_question_set_in_chinese(admin_client, team):
    PersonSettings.objects.create(user=team.admin, language="zh-hans")
    eval_set = eval_set_create(assistant=AssistantFactory(account=team.account, name="Helper"), name="Launch")
    eval_questions_add(eval_set=eval_set, questions=[ParsedQuestion("Price?")], origin="typed")
    html = admin_client.get(
        f"/app/accounts/{team.account.id}/evaluation/sets/{eval_set.id}/"
    ).content.decode()
    page = main(html)
    for chinese in ("上线前测试", "1 个问题", "输入问题", "每行一个问题", "从文档草拟", "删除问题集"):
        assert chinese in page, chinese
    # The builder's own texts (names, the question, its origin's label from the model) are shown as written;
    # the file formats' code words stay as they are.
    builders = {"Helper", "Launch", "Price", "Typed"}
    formats = {
        "CSV",
        "JSON Lines",
        "UTF",
        "KiB",
        "question",
        "expected",
        "previous",
        "role",
        "user",
        "content",
    }
    assert set(visible_english(page)) - builders - formats == set()


def test_a_chinese_person_reads_a_run_and_a_comparison_in_chinese(admin_client, team):
    PersonSettings.objects.create(user=team.admin, language="zh-hans")
    eval_set = eval_set_create(assistant=AssistantFactory(account=team.account, name="Helper"), name="Launch")
    first, second = EvalRun.objects.create(set=eval_set), EvalRun.objects.create(set=eval_set)
    base = f"/app/accounts/{team.account.id}/evaluation"
    run = main(admin_client.get(f"{base}/runs/{second.id}/").content.decode())
    for chinese in (
        "已回答",
        "标为正确",
        "标为错误",
        "你的标记",
        "正在回答这些问题：本页会自动刷新。",
        "0 份文档",
    ):
        assert chinese in run, chinese
    compare = admin_client.get(f"{base}/compare/?left={first.id}&right={second.id}").content.decode()
    assert "<title>对比运行" in compare
    assert "0 个问题中有 0 个有变化。 两次运行的配置相同。" in main(compare)


def test_a_chinese_person_reviews_faq_drafts_in_chinese(admin_client, team):
    PersonSettings.objects.create(user=team.admin, language="zh-hans")
    assistant = AssistantFactory(account=team.account, name="Helper")
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    FaqEntryFactory(
        assistant=assistant,
        question="Gift wrap?",
        answer="Yes.",
        status="pending",
        source="conversation",
        source_conversation=conversation,
    )
    page = main(admin_client.get(f"/app/accounts/{team.account.id}/faq/").content.decode())
    for chinese in (
        "FAQ 审核",
        "让 AI 写草稿",
        "批准所选",
        "问题与回答",
        f"对话 #{conversation.id}",
        "编辑并批准",
    ):
        assert chinese in page, chinese
    # Left in English: the builder's texts, and the tabs' titles, which the view (captain/knowledge) names.
    tabs = {"Pending review", "Approved", "Rejected"}
    assert set(visible_english(page)) - {"Helper", "Gift wrap", "Yes", "FAQ"} - tabs == set()


def test_a_chinese_person_reads_the_playground_in_chinese(admin_client, team):
    PersonSettings.objects.create(user=team.admin, language="zh-hans")
    AssistantFactory(account=team.account, name="Helper")
    html = admin_client.get(f"/app/accounts/{team.account.id}/playground/").content.decode()
    page = main(html)
    for chinese in (
        "调试台",
        "从这里开始",
        "说点什么来开始。",
        'placeholder="以客户的身份输入"',
        "重新开始",
        "调试日志",
    ):
        assert chinese in page, chinese
    # Left: the assistant's name and its agent's key (the builder's own).
    assert set(visible_english(page)) == {"Helper", "assistant"}


def test_a_chinese_person_reads_the_ai_debug_log_in_chinese(admin_client, team):
    PersonSettings.objects.create(user=team.admin, language="zh-hans")
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, contact_inbox__contact__name="Dana")
    html = admin_client.get(
        f"/app/accounts/{team.account.id}/conversations/{conversation.id}/runs/"
    ).content.decode()
    page = main(html)
    assert "<title>AI 调试日志" in html
    for chinese in (
        "这个对话的每一次 AI 运行",
        "只有 Acme 的管理员能看到本页。",
        "AI 还没有在这个对话上运行过。",
    ):
        assert chinese in page, chinese
    assert set(visible_english(page)) == {"Dana", "Acme"}


def test_a_chinese_person_reads_routing_corrections_in_chinese(admin_client, team):
    PersonSettings.objects.create(user=team.admin, language="zh-hans")
    AssistantFactory(account=team.account, name="Helper")
    page = main(admin_client.get(f"/app/accounts/{team.account.id}/routing-corrections/").content.decode())
    for chinese in ("AI 分派给了错误智能体的客户消息", "没有待审核的纠正。", "“归错了？”"):
        assert chinese in page, chinese
    assert set(visible_english(page)) == {"Helper"}


def test_a_chinese_person_reads_the_knowledge_page_in_chinese(admin_client, team):
    PersonSettings.objects.create(user=team.admin, language="zh-hans")
    AssistantFactory(account=team.account, name="Helper")
    page = main(admin_client.get(f"/app/accounts/{team.account.id}/knowledge/").content.decode())
    for chinese in (
        "助手据以回答的内容",
        "还没有文档：请在下面上传文件或导入网页。",
        "从网上导入",
        "链接深度",
    ):
        assert chinese in page, chinese
    # Left: the assistant's name, the file formats, and the import kinds' labels (from captain/knowledge's view).
    formats = {"Markdown", "HTML", "PDF"}
    assert set(visible_english(page)) == formats | {"Helper", "Web page", "Sitemap", "Site crawl"}


def test_a_chinese_person_is_told_what_happened_in_chinese(admin_client, team):
    PersonSettings.objects.create(user=team.admin, language="zh-hans")
    eval_set = eval_set_create(assistant=AssistantFactory(account=team.account, name="Helper"), name="Launch")
    url = f"/app/accounts/{team.account.id}/evaluation/sets/{eval_set.id}/"
    typed = admin_client.post(url, {"action": "type", "text": "Price?\nHours?"}, follow=True).content.decode()
    assert "已添加 2 个问题。" in typed
    refused = admin_client.post(url, {"action": "type", "text": ""}, follow=True).content.decode()
    assert "请至少输入一个问题，每行一个。" in refused


def test_a_chinese_person_reads_a_runs_steps_in_chinese(client, scene):  # noqa: F811  (the imported fixture)
    PersonSettings.objects.create(user=scene["admin"], language="zh-hans")
    html = debug_log_page(client, scene)
    # Plan, thoughts, artifacts, confirmations and HTTP exchanges: the words around the recorded data.
    for chinese in (
        "计划状态（1 个）",
        'aria-label="已完成"',
        "等待：",
        "产物（2 个）",
        "3300 个字符",
        "确认（1 个）",
        "状态码 500",
        "请求",
        "响应",
        "文本协议错误（1 个）",
        "较早的状态（1 个），最新的在前",
    ):
        assert chinese in html, chinese
    for english in (
        "Plan states",
        "Artifacts (",
        "waiting for:",
        "Confirmations (",
        "Model output",
        "Raw output",
    ):
        assert english not in html, english


def test_a_chinese_agent_reads_the_copilot_under_the_reply_box_in_chinese(agent_client, team):
    PersonSettings.objects.create(user=team.agent, language="zh-hans")
    AssistantInboxFactory(assistant=AssistantFactory(account=team.account), inbox=team.inbox)
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    html = agent_client.get(
        f"/app/accounts/{team.account.id}/conversations/{conversation.id}/"
    ).content.decode()
    panel = html[html.index('<div class="copilot"') : html.index('<script src="/static/captain/copilot.js')]
    for chinese in (
        "副驾驶：",
        "草拟回复",
        "总结",
        "改写",
        "调整语气",
        "翻译",
        "按“发送”之前什么都不会发出。",
    ):
        assert chinese in panel, chinese
    assert visible_english(panel) == []


def test_everyone_else_still_reads_them_in_english(admin_client, team):
    html = admin_client.get(f"/app/accounts/{team.account.id}/usage/").content.decode()
    assert "<h1>AI usage</h1>" in html and "Handoffs and resolutions per assistant" in html
    assert "用量" not in main(html)
