"""What the AI's knowledge did, as agents and admins see it: cited sources under the reply in the conversation,
and every source put before the model in the debug log."""

from __future__ import annotations

import re

import pytest

from captain.answering.models import ReplyJob
from captain.answering.services.runs import run_for_message
from tests.captain.answering.knowledge_rows import document
from tests.factories import AssistantInboxFactory, ConversationFactory, FaqEntryFactory, MessageFactory
from tests.support.fake_llm_server import text

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def answered(team, redis_url, llm_settings):
    link = AssistantInboxFactory(
        assistant__account=team.account, inbox=team.inbox, assistant__product_name="Volta"
    )
    FaqEntryFactory(
        assistant=link.assistant, question="Where can I park my bike?", answer="At any Volta station."
    )
    document(
        link.assistant,
        "Station guide",
        [("Opening hours", "Stations are open 9:00-18:00, Monday to Saturday.")],
        url="https://volta.example/help/stations",
    )
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    message = MessageFactory(
        conversation=conversation, content="when are the stations open?", reply_job=ReplyJob.Status.PENDING
    )
    llm_settings.push(text("Stations are open 9:00-18:00, Monday to Saturday."))
    assert run_for_message(message_id=message.id) == "reply"
    return conversation


def test_the_conversation_shows_the_sources_an_ai_reply_cited(agent_client, team, answered):
    html = agent_client.get(f"/app/accounts/{team.account.id}/conversations/{answered.id}/").content.decode()
    assert 'class="small muted cited-sources">Sources: <a href="https://volta.example/help/stations"' in html
    assert "Station guide &gt; Opening hours" in html
    assert "Where can I park" not in html  # retrieved or not, an uncited source is not shown to agents


def test_the_debug_log_lists_every_source_and_the_knowledge_step(admin_client, team, answered):
    html = admin_client.get(
        f"/app/accounts/{team.account.id}/conversations/{answered.id}/runs/"
    ).content.decode()
    assert "Knowledge put before the model" in html
    assert re.search(
        r'<li class="source-cited">\s*<b>cited</b> · document · <a href="https://volta.example', html
    )
    assert "Knowledge (answered)" in html
    assert "when are the stations open?" in html
