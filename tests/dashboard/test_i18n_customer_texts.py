"""The built-in texts customers read (the rating question and its thank-yous) are in the inbox's language,
whatever language the dashboard of the person who resolved the conversation speaks; an inbox's own text wins."""

from __future__ import annotations

import pytest
from django.utils import translation

from helpdesk.channels.base import InboundContact, InboundMessage
from helpdesk.models import Inbox, Language
from helpdesk.services.csat import csat_answer_ingest
from tests.helpdesk.csat.conftest import (
    API_CONTACT,
    _inbox,
    conversation_with_customer,
    outgoing_system,
    rating_request,
    resolve,
)

pytestmark = pytest.mark.django_db

QUESTION_ZH = "您对本次服务满意吗？请回复 1（很不满意）到 5（非常满意）之间的数字。"
QUESTION_EN = "How would you rate the help you got? Reply with a number from 1 (poor) to 5 (excellent)."


@pytest.fixture
def chinese_inbox() -> Inbox:
    return _inbox(language=Language.SIMPLIFIED_CHINESE, callback_url="http://127.0.0.1:9/")


def answer(conversation, text: str, provider_id: str) -> None:
    inbound = InboundMessage(
        provider_message_id=provider_id, contact=InboundContact(source_id=API_CONTACT), text=text
    )
    assert csat_answer_ingest(contact_inbox=conversation.contact_inbox, inbound=inbound) is not None


def test_a_chinese_inbox_asks_and_thanks_in_chinese(chinese_inbox, django_capture_on_commit_callbacks):
    conversation = resolve(
        conversation_with_customer(chinese_inbox, API_CONTACT), django_capture_on_commit_callbacks
    )
    assert rating_request(conversation).content == QUESTION_ZH
    answer(conversation, "5", "rating-1")
    answer(conversation, "客服很耐心", "comment-1")
    assert [m.content for m in outgoing_system(conversation)] == [
        QUESTION_ZH,
        "感谢您的评价！还有什么想补充的吗？直接在这里回复即可。",
        "谢谢，您的意见我们已转达给团队。",
    ]


def test_an_english_inbox_asks_in_english_when_a_chinese_dashboard_resolves(
    django_capture_on_commit_callbacks,
):
    inbox = _inbox(callback_url="http://127.0.0.1:9/")
    assert inbox.language == Language.ENGLISH  # the default of every inbox, old ones included
    with translation.override("zh-hans"):  # the request of a person whose dashboard speaks Chinese
        conversation = resolve(
            conversation_with_customer(inbox, API_CONTACT), django_capture_on_commit_callbacks
        )
    assert rating_request(conversation).content == QUESTION_EN


def test_the_inbox_own_question_wins_over_its_language(chinese_inbox, django_capture_on_commit_callbacks):
    chinese_inbox.csat_message = "请给我们打分（1-5）"
    chinese_inbox.save()
    conversation = resolve(
        conversation_with_customer(chinese_inbox, API_CONTACT), django_capture_on_commit_callbacks
    )
    assert rating_request(conversation).content == "请给我们打分（1-5）"
