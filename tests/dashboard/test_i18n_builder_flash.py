"""The builder pages' flash messages follow the person's language: a person who chose Simplified Chinese reads
what a re-sync, an FAQ review, a routing correction's review and a re-route did in Chinese, the data (a
document's name, a question, a node's title) as written."""

from __future__ import annotations

import pytest

from captain.knowledge.models import KnowledgeDocument
from helpdesk.models import PersonSettings
from tests.dashboard.test_faq_review import drafts  # noqa: F401  (the fixture: pending FAQ drafts)
from tests.dashboard.test_faq_review import page as faq_page
from tests.dashboard.test_knowledge_page import page_url as knowledge_url
from tests.dashboard.test_knowledge_page import ready_document
from tests.dashboard.test_routing_corrections import ai, pending, post_review, reroute  # noqa: F401  (the fixtures)
from tests.factories import AssistantFactory

pytestmark = pytest.mark.django_db


def chinese(user) -> None:
    PersonSettings.objects.create(user=user, language="zh-hans")


def test_a_chinese_person_reads_the_knowledge_pages_flash_in_chinese(admin_client, team):
    chinese(team.admin)
    assistant = AssistantFactory(account=team.account, name="Helper")
    document = ready_document(assistant)

    html = admin_client.post(
        knowledge_url(team.account.id),
        {"assistant": assistant.id, "action": "resync", "document": document.id},
        follow=True,
    ).content.decode()

    document.refresh_from_db()
    assert document.status == KnowledgeDocument.Status.QUEUED
    assert f"“{document}”已排队等待重新同步。" in html
    assert "queued for a re-sync" not in html
    refused = admin_client.post(
        knowledge_url(team.account.id), {"assistant": assistant.id, "action": "nonsense"}, follow=True
    ).content.decode()
    assert "未知操作。" in refused and "Unknown action." not in refused


def test_a_chinese_person_reads_the_faq_reviews_flash_and_tabs_in_chinese(admin_client, team, drafts):  # noqa: F811
    chinese(team.admin)
    assistant, from_doc, _from_conv, _approved, _conv = drafts

    html = admin_client.post(
        faq_page(team),
        {"assistant": assistant.pk, "status": "pending", "op": "reject", "entry": from_doc.pk},
        follow=True,
    ).content.decode()

    from_doc.refresh_from_db()
    assert from_doc.status == "rejected"
    assert "已拒绝：How long do parcels take?" in html  # the question is data, shown as written
    assert "待审核" in html and "Pending review" not in html
    assert "Rejected" not in html
    none = admin_client.post(
        faq_page(team),
        {"assistant": assistant.pk, "status": "pending", "op": "bulk", "action": "approve"},
        follow=True,
    ).content.decode()
    assert "未作更改：请至少选择一个条目。" in none and "Select at least one entry." not in none


def test_a_chinese_person_reads_the_routing_corrections_flash_in_chinese(admin_client, team, pending):  # noqa: F811
    chinese(team.admin)
    assistant, _conversation, rows, _drafted = pending

    html = post_review(admin_client, team, assistant, op="accept", example=rows[0].id, key="shipping").content
    page = html.decode()

    assert "已接受为 Shipping：分流器现在会使用它。" in page
    assert "the router uses it now" not in page
    rejected = post_review(admin_client, team, assistant, op="reject", example=rows[1].id).content.decode()
    assert "已拒绝：这条消息不会再被提议给该节点。" in rejected and "will not be proposed" not in rejected


def test_a_chinese_agent_reads_the_reroute_result_in_chinese(agent_client, team, ai):  # noqa: F811
    chinese(team.agent)
    _assistant, conversation, _message = ai

    page = reroute(agent_client, team, conversation, "shipping", follow=True).content.decode()

    assert "客户下一条消息到来时，AI 将从 Shipping 继续。" in page
    assert "这条消息已被提议为分流示例，等待审核。" in page
    assert "The AI continues at" not in page and "proposed as a routing example" not in page
