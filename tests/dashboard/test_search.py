"""One search over conversations, messages and contacts: full text through the index of migration 0018 (FTS5
on SQLite, a GIN index on PostgreSQL), filters, the tenant wall, and any text (operators, quotes, 10,000
characters, NUL) answered with a page, never a 500."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from helpdesk.models import Label, Message
from helpdesk.selectors.search import SearchFilters, message_ids_matching, search, search_terms
from tests.factories import ContactInboxFactory, ConversationFactory, MessageFactory

pytestmark = pytest.mark.django_db


def url(team, query: str = "") -> str:
    return f"/app/accounts/{team.account.id}/search/" + (f"?{query}" if query else "")


def found(response, kind: str) -> list[int]:
    html = response.content.decode()
    section = html.split(f'data-results="{kind}"', 1)[1].split("</ul>", 1)[0]
    return [int(x) for x in re.findall(r'href="/app/accounts/\d+/(?:conversations|contacts)/(\d+)/', section)]


@pytest.fixture
def threads(team, other_team):
    refund = ConversationFactory(
        contact_inbox=ContactInboxFactory(
            inbox=team.inbox, contact__name="Wang Fang", contact__email="wang@example.com"
        ),
        status="open",
        assignee=team.agent,
    )
    MessageFactory(conversation=refund, content="My parcel arrived broken, I want a REFUND please")
    MessageFactory(conversation=refund, content="我想申请退款，包裹破损了")
    shipping = ConversationFactory(contact_inbox__inbox=team.inbox, status="resolved")
    MessageFactory(conversation=shipping, content="When does the shipping label arrive?")
    MessageFactory(
        conversation=shipping,
        content="refund approved internally",
        message_type=Message.Type.OUTGOING,
        sender_type=Message.SenderType.USER,
        private=True,
    )
    MessageFactory(
        conversation=shipping,
        content="bob took over: refund",
        message_type=Message.Type.ACTIVITY,
        sender_type=Message.SenderType.SYSTEM,
    )
    elsewhere = ConversationFactory(contact_inbox__inbox=other_team.inbox, status="open")
    MessageFactory(conversation=elsewhere, content="refund for the other tenant, 退款")
    return {"refund": refund, "shipping": shipping, "elsewhere": elsewhere}


def test_messages_are_found_by_word_any_case_and_chinese(team, threads):
    refund, shipping = threads["refund"], threads["shipping"]
    results = search(account_id=team.account.id, query="refund")
    texts = {m.content for m in results.messages}
    # The customer's words, the private note; not the activity line, not the other tenant's message.
    assert texts == {"My parcel arrived broken, I want a REFUND please", "refund approved internally"}
    assert {c.pk for c in results.conversations} == {refund.pk, shipping.pk}
    chinese = search(account_id=team.account.id, query="退款")
    assert [m.content for m in chinese.messages] == ["我想申请退款，包裹破损了"]
    assert [c.pk for c in chinese.conversations] == [refund.pk]
    # Every word must match.
    assert [
        m.conversation_id for m in search(account_id=team.account.id, query="parcel broken").messages
    ] == [refund.pk]
    assert search(account_id=team.account.id, query="parcel shipping").messages == []


def test_the_index_follows_edits_and_deletes(team, threads):
    message = MessageFactory(conversation=threads["shipping"], content="a zeppelin landed")
    assert message_ids_matching(account_id=team.account.id, terms=["zeppelin"]) == [
        (message.pk, message.conversation_id)
    ]
    Message.objects.filter(pk=message.pk).update(content="a balloon landed")
    assert message_ids_matching(account_id=team.account.id, terms=["zeppelin"]) == []
    assert message_ids_matching(account_id=team.account.id, terms=["balloon"]) == [
        (message.pk, message.conversation_id)
    ]
    Message.objects.filter(pk=message.pk).delete()
    assert message_ids_matching(account_id=team.account.id, terms=["balloon"]) == []


def test_contacts_and_conversation_numbers(team, threads):
    refund = threads["refund"]
    results = search(account_id=team.account.id, query="wang@exa")
    assert [c.pk for c in results.contacts] == [refund.contact_id]
    assert [c.pk for c in results.conversations] == [refund.pk]
    by_number = search(account_id=team.account.id, query=f"#{threads['shipping'].pk}")
    assert threads["shipping"].pk in {c.pk for c in by_number.conversations}
    # Another account's conversation number finds nothing here.
    assert search(account_id=team.account.id, query=f"#{threads['elsewhere'].pk}").conversations == []


def test_filters_apply_to_conversations_and_messages(team, threads):
    refund, shipping = threads["refund"], threads["shipping"]
    label = Label.objects.create(account=team.account, name="vip")
    shipping.labels.add(label)
    by_status = search(account_id=team.account.id, query="refund", filters=SearchFilters(status="resolved"))
    assert [c.pk for c in by_status.conversations] == [shipping.pk]
    assert [m.conversation_id for m in by_status.messages] == [shipping.pk]
    mine = search(
        account_id=team.account.id, query="refund", filters=SearchFilters(assignee_id=team.agent.pk)
    )
    assert [c.pk for c in mine.conversations] == [refund.pk]
    labelled = search(account_id=team.account.id, query="refund", filters=SearchFilters(label_id=label.pk))
    assert [c.pk for c in labelled.conversations] == [shipping.pk]
    elsewhere = search(
        account_id=team.account.id,
        query="refund",
        filters=SearchFilters(inbox_id=threads["elsewhere"].inbox_id),
    )
    assert elsewhere.empty


def test_search_page_shows_each_kind_with_links(agent_client, team, threads):
    response = agent_client.get(url(team, "q=refund&status=open"))
    assert response.status_code == 200
    assert found(response, "conversations") == [threads["refund"].pk]
    assert found(response, "messages") == [threads["refund"].pk]
    assert "I want a REFUND please" in response.content.decode()
    contacts = agent_client.get(url(team, "q=Wang"))
    assert found(contacts, "contacts") == [threads["refund"].contact_id]
    assert "Nothing matches" in agent_client.get(url(team, "q=xylophone")).content.decode()


def test_the_search_page_is_for_members_only(client, team, other_team, threads):
    assert client.get(url(team, "q=refund")).status_code == 302  # to the sign-in page
    client.force_login(other_team.admin)
    assert client.get(url(team, "q=refund")).status_code == 404


@pytest.mark.parametrize(
    "query",
    [
        '"refund',
        "refund*",
        "NEAR(refund parcel)",
        "refund AND parcel",
        "-refund",
        "refund OR",
        "col:refund",
        "^refund",
        "(((",
        "'; DROP TABLE helpdesk_message; --",
        "refund\x00parcel",
        "x" * 10_000,
        "退款 " * 3000,
        "*",
        '""',
    ],
)
def test_any_text_is_a_search_never_an_error(agent_client, team, threads, query):
    response = agent_client.get(url(team), {"q": query})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="search-q"' in html
    if len(query) > 200:
        assert "Only the first 200 characters" in html
    # The operators are separators: the words still match.
    if query in ('"refund', "refund*", "-refund", "^refund", "refund OR"):
        assert threads["refund"].pk in found(response, "conversations")
    assert Message.objects.count() == 6  # nothing was dropped


def test_search_terms_are_words_only():
    assert search_terms('"refund* NEAR(parcel) -broken AND 退款') == ["refund", "parcel", "broken", "退款"]
    assert search_terms("AND") == ["and"]  # a lone operator word is a word
    assert len(search_terms(" ".join(f"w{i}" for i in range(50)))) == 8


def test_index_is_the_vendors_full_text_index():
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT sql FROM sqlite_master WHERE name = 'helpdesk_message_fts'")
            assert "fts5" in cursor.fetchone()[0]
        else:
            cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'helpdesk_message_fts_idx'")
            assert "gin" in cursor.fetchone()[0].lower()


def test_the_lists_search_box_goes_through_the_same_index(agent_client, team, threads):
    refund, shipping = threads["refund"], threads["shipping"]

    def listed(query: str) -> set[int]:
        html = agent_client.get(f"/app/accounts/{team.account.id}/lists/all/", {"q": query}).content.decode()
        return {int(x) for x in re.findall(r'data-conversation="(\d+)"', html)}

    assert listed("broken parcel") == {refund.pk}  # every word, in any order
    assert listed("退款") == {refund.pk}  # two Chinese characters: the scan
    assert listed("申请退款") == {refund.pk}  # four: the index
    assert listed("REFUND") == {refund.pk, shipping.pk}
    assert listed('"refund* NEAR') == {refund.pk, shipping.pk}
    assert listed("zeppelin") == set()
