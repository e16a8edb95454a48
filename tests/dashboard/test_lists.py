"""The conversation lists: which conversations each folder shows, in what order, filters, search, counts,
pagination, and a bounded number of queries whatever the data size."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from helpdesk.models import Conversation, Label, Message
from helpdesk.models import Team as SupportTeam
from helpdesk.services.messages import message_create_agent_reply
from tests.factories import ContactInboxFactory, ConversationFactory, InboxFactory, MessageFactory
from tests.support.fake_files import PNG

from .conftest import count_queries

pytestmark = pytest.mark.django_db

# +1 for the bulk bar's people to assign to, +1 for the person's macros.
MAX_LIST_QUERIES = 14


def listed(response) -> list[int]:
    return [int(x) for x in re.findall(rb'data-conversation="(\d+)"', response.content)]


def url(team, folder: str, query: str = "") -> str:
    return f"/app/accounts/{team.account.id}/lists/{folder}/" + (f"?{query}" if query else "")


@pytest.fixture
def mix(team):
    now = timezone.now()
    c = {
        "ai": ConversationFactory(contact_inbox__inbox=team.inbox, status="pending"),
        "old_wait": ConversationFactory(
            contact_inbox__inbox=team.inbox,
            status="open",
            escalation_reason="Customer asked for a refund over the limit",
            waiting_since=now - dt.timedelta(hours=3),
        ),
        "new_wait": ConversationFactory(
            contact_inbox__inbox=team.inbox, status="open", waiting_since=now - dt.timedelta(minutes=5)
        ),
        "mine": ConversationFactory(
            contact_inbox__inbox=team.inbox, status="open", assignee=team.agent, waiting_since=now
        ),
        "resolved": ConversationFactory(contact_inbox__inbox=team.inbox, status="resolved"),
    }
    return c


def test_each_folder_shows_its_conversations(agent_client, team, mix):
    assert listed(agent_client.get(url(team, "ai"))) == [mix["ai"].id]
    assert set(listed(agent_client.get(url(team, "needs-people")))) == {
        mix["old_wait"].id,
        mix["new_wait"].id,
        mix["mine"].id,
    }
    assert listed(agent_client.get(url(team, "mine"))) == [mix["mine"].id]
    assert listed(agent_client.get(url(team, "unassigned"))) == [mix["old_wait"].id, mix["new_wait"].id]
    assert listed(agent_client.get(url(team, "resolved"))) == [mix["resolved"].id]
    assert set(listed(agent_client.get(url(team, "all")))) == {c.id for c in mix.values()}


def test_the_all_folder_searches_every_status(agent_client, team, mix):
    MessageFactory(conversation=mix["resolved"], content="parcel 7731 arrived broken")
    MessageFactory(conversation=mix["ai"], content="where is parcel 7731?")
    assert set(listed(agent_client.get(url(team, "all", "q=parcel 7731")))) == {
        mix["resolved"].id,
        mix["ai"].id,
    }
    assert listed(agent_client.get(url(team, "all", f"q=%23{mix['mine'].id}"))) == [mix["mine"].id]


def test_needs_people_is_oldest_first_with_reason_and_waiting_time(agent_client, team, mix):
    response = agent_client.get(url(team, "needs-people"))
    assert listed(response) == [mix["old_wait"].id, mix["new_wait"].id, mix["mine"].id]
    html = response.content.decode()
    assert "Customer asked for a refund over the limit" in html
    assert "3\xa0hours" in html  # timesince of the oldest waiting customer


def test_counts_per_folder(agent_client, team, mix):
    html = agent_client.get(url(team, "ai")).content.decode()
    counts = dict(re.findall(r'data-folder-count="([\w-]+)">(\d+)<', html))
    assert counts == {
        "needs-people": "3",
        "ai": "1",
        "mine": "1",
        "unassigned": "2",
        "snoozed": "0",
        "resolved": "1",
        "all": "5",
    }


def test_filters_by_inbox_label_and_priority(agent_client, team, mix):
    other_inbox = InboxFactory(account=team.account, name="E-mail")
    elsewhere = ConversationFactory(contact_inbox=ContactInboxFactory(inbox=other_inbox), status="open")
    assert listed(agent_client.get(url(team, "needs-people", f"inbox={other_inbox.id}"))) == [elsewhere.id]

    vip = Label.objects.create(account=team.account, name="vip")
    mix["new_wait"].labels.add(vip)
    response = agent_client.get(url(team, "needs-people", f"label={vip.id}"))
    assert listed(response) == [mix["new_wait"].id]
    counts = dict(re.findall(r'data-folder-count="([\w-]+)">(\d+)<', response.content.decode()))
    assert counts["needs-people"] == "1" and counts["ai"] == "0"  # counts follow the filters

    Conversation.objects.filter(pk=mix["old_wait"].pk).update(priority="urgent")
    assert listed(agent_client.get(url(team, "needs-people", "priority=urgent"))) == [mix["old_wait"].id]


def test_filters_by_team_and_offers_only_this_accounts_teams(agent_client, team, other_team, mix):
    billing = SupportTeam.objects.create(account=team.account, name="Billing")
    SupportTeam.objects.create(account=other_team.account, name="Their secret team")
    Conversation.objects.filter(pk=mix["new_wait"].pk).update(team=billing)
    response = agent_client.get(url(team, "needs-people", f"team={billing.id}"))
    assert listed(response) == [mix["new_wait"].id]
    html = response.content.decode()
    assert ">Billing</option>" in html and "Their secret team" not in html


def test_search_finds_names_message_text_and_ids(agent_client, team, mix):
    mix["new_wait"].contact.name = "Zoë Quartermaine"
    mix["new_wait"].contact.save()
    MessageFactory(conversation=mix["old_wait"], content="My parcel 7731 never arrived")
    assert listed(agent_client.get(url(team, "needs-people", "q=quarterm"))) == [mix["new_wait"].id]
    assert listed(agent_client.get(url(team, "needs-people", "q=parcel+7731"))) == [mix["old_wait"].id]
    assert listed(agent_client.get(url(team, "needs-people", f"q=%23{mix['mine'].id}"))) == [mix["mine"].id]
    assert listed(agent_client.get(url(team, "needs-people", "q=nothing-like-this"))) == []


def test_other_accounts_conversations_never_appear(agent_client, team, other_team, mix):
    foreign = ConversationFactory(contact_inbox__inbox=other_team.inbox, status="open")
    MessageFactory(conversation=foreign, content="parcel 7731")
    for folder in ("needs-people", "ai", "unassigned", "resolved", "mine", "all"):
        assert foreign.id not in listed(agent_client.get(url(team, folder, "q=parcel")))
        assert foreign.id not in listed(agent_client.get(url(team, folder)))


def test_lists_are_paginated_by_50(agent_client, team):
    for _ in range(55):
        ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    first = agent_client.get(url(team, "ai"))
    second = agent_client.get(url(team, "ai", "page=2"))
    assert len(listed(first)) == 50 and len(listed(second)) == 5
    assert not set(listed(first)) & set(listed(second))
    assert b"Page 1 of 2" in first.content and b"page=2" in first.content


def test_list_shows_the_latest_public_message_escaped(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    MessageFactory(conversation=conversation, content="first")
    MessageFactory(conversation=conversation, content="<b>latest</b>")
    MessageFactory(
        conversation=conversation,
        content="private",
        private=True,
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.USER,
    )
    html = agent_client.get(url(team, "ai")).content.decode()
    assert "&lt;b&gt;latest&lt;/b&gt;" in html and "<b>latest</b>" not in html
    assert "private" not in re.search(r'<td class="preview">(.*?)</td>', html).group(1)


def seed(team, n: int) -> None:
    """n conversations in each folder, with labels, an assignee and a few messages each."""
    label = Label.objects.get_or_create(account=team.account, name="billing")[0]
    for status in ("pending", "open", "snoozed", "resolved"):
        for i in range(n):
            conversation = ConversationFactory(
                contact_inbox__inbox=team.inbox,
                status=status,
                snoozed_until=timezone.now() + dt.timedelta(hours=i + 1) if status == "snoozed" else None,
                assignee=team.agent if i % 2 else None,
                waiting_since=timezone.now() if status == "open" else None,
                escalation_reason="why" if status == "open" else "",
            )
            conversation.labels.add(label)
            MessageFactory(conversation=conversation, content=f"hello {i}")
            MessageFactory(
                conversation=conversation,
                content="reply",
                message_type=Message.Type.OUTGOING,
                sender_type=Message.SenderType.ASSISTANT,
            )


@pytest.mark.parametrize("folder", ["needs-people", "ai", "mine", "unassigned", "snoozed", "resolved", "all"])
@pytest.mark.parametrize("query", ["", "q=hello&label={label}&priority=none"])
def test_list_queries_do_not_grow_with_the_data(
    agent_client, team, folder, query, django_assert_max_num_queries
):
    seed(team, 2)
    query = query.format(label=Label.objects.get(account=team.account, name="billing").id)
    agent_client.get(url(team, folder, query))  # warm the session
    small, _ = count_queries(lambda: agent_client.get(url(team, folder, query)))
    seed(team, 30)
    with django_assert_max_num_queries(MAX_LIST_QUERIES):
        large, response = count_queries(lambda: agent_client.get(url(team, folder, query)))
    assert response.status_code == 200 and listed(response)
    assert small == large <= MAX_LIST_QUERIES


def test_list_shows_the_customers_last_words_not_the_handoff_boilerplate(agent_client, team):
    """After a handoff the latest public message is the bot's "a teammate is coming": the list shows what the
    customer said instead (and the latest public message when the customer has said nothing)."""
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    MessageFactory(conversation=conversation, content="older words")
    MessageFactory(conversation=conversation, content="My parcel never arrived")
    MessageFactory(
        conversation=conversation,
        content="A teammate will be with you shortly.",
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.ASSISTANT,
    )
    outbound_only = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    MessageFactory(
        conversation=outbound_only,
        content="We opened this for you",
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.USER,
    )
    html = agent_client.get(url(team, "needs-people")).content.decode()
    previews = dict(
        re.findall(r'data-conversation="(\d+)">.*?<td class="preview">(.*?)</td>', html, flags=re.S)
    )
    assert previews[str(conversation.id)] == "My parcel never arrived"
    assert previews[str(outbound_only.id)] == "We opened this for you"
    assert "Customer's last words" in html


def test_a_message_of_files_alone_is_previewed_by_its_file_names(agent_client, team, settings, tmp_path):
    """A reply of files alone (sent through the real service, stored) and a customer's photo without a caption
    show their files' names where the text would be, in the list and in the conversation page's queue pane; a
    text beside files is still the preview."""
    settings.MEDIA_ROOT = str(tmp_path)
    files_reply = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    message_create_agent_reply(
        conversation=files_reply,
        user=team.agent,
        content="",
        files=[
            SimpleUploadedFile("invoice.pdf", b"%PDF-1.7\n" + b"x" * 64, "application/pdf"),
            SimpleUploadedFile("parcel.png", PNG, "image/png"),
        ],
    )
    photo = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    MessageFactory(conversation=photo, content="", attachments=[{"type": "image", "file_name": "damage.jpg"}])
    MessageFactory(conversation=photo, content="", attachments=[{"type": "audio"}])  # no name: its kind
    captioned = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    MessageFactory(
        conversation=captioned, content="See the label", attachments=[{"type": "image", "file_name": "l.jpg"}]
    )
    html = agent_client.get(url(team, "all")).content.decode()
    previews = dict(
        re.findall(r'data-conversation="(\d+)">.*?<td class="preview">(.*?)</td>', html, flags=re.S)
    )
    assert previews[str(files_reply.id)] == "📎 invoice.pdf, 📎 parcel.png"
    assert previews[str(photo.id)] == "📎 audio"
    assert previews[str(captioned.id)] == "See the label"
    MessageFactory(
        conversation=photo, content="", attachments=[{"type": "image", "file_name": "<b>x</b>.jpg"}]
    )
    page = agent_client.get(
        f"/app/accounts/{team.account.id}/conversations/{files_reply.id}/?folder=all"
    ).content.decode()
    assert "📎 invoice.pdf, 📎 parcel.png" in page
    assert "📎 &lt;b&gt;x&lt;/b&gt;.jpg" in page and "<b>x</b>" not in page


def test_snoozed_folder_lists_by_wake_up_time_in_the_account_time_zone(agent_client, team):
    team.account.time_zone = "Europe/Berlin"
    team.account.save(update_fields=["time_zone"])
    later = ConversationFactory(
        contact_inbox__inbox=team.inbox,
        status="snoozed",
        snoozed_until=dt.datetime(2031, 1, 6, 8, 0, tzinfo=dt.UTC),
    )
    sooner = ConversationFactory(
        contact_inbox__inbox=team.inbox,
        status="snoozed",
        snoozed_until=dt.datetime(2031, 1, 3, 8, 0, tzinfo=dt.UTC),
    )
    ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    response = agent_client.get(url(team, "snoozed"))
    assert listed(response) == [sooner.id, later.id]
    html = response.content.decode()
    assert "Wakes up" in html
    assert "Fri 3 Jan, 09:00" in html  # 08:00 UTC is 09:00 in Berlin
    counts = dict(re.findall(r'data-folder-count="([\w-]+)">(\d+)<', html))
    assert counts["snoozed"] == "2"


@pytest.mark.parametrize(
    "query", ["x" * 10_000, '"parcel" OR refund* NEAR(a b) -x ^y', "%_\\'; --", "#" + "9" * 40]
)
def test_any_search_string_answers_a_page_never_a_500(agent_client, team, mix, query):
    response = agent_client.get(url(team, "all"), {"q": query})
    assert response.status_code == 200
    assert listed(response) == []
