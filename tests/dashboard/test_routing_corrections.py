"""Learning from corrections in the dashboard: the conversation page's "This should have gone to ..." action
(any member; CSRF; other tenants 404; the node moves and the message is proposed) and the review page
(administrators only; accept with the suggested or another node, reject, bulk)."""

from __future__ import annotations

import pytest
from django.test import Client

from captain.routing.models import RoutingDecision, RoutingExample
from captain.routing.services.routing_examples import examples_in_use
from helpdesk.models import Conversation
from tests.factories import (
    AssistantInboxFactory,
    ConversationFactory,
    MessageFactory,
    ScenarioFactory,
)

pytestmark = pytest.mark.django_db

XSS = "<script>window.__xss=1</script>"


@pytest.fixture
def ai(team):
    """An assistant on the team's inbox; the router sent the customer's message from triage to refunds."""
    link = AssistantInboxFactory(assistant__account=team.account, assistant__name="Helper", inbox=team.inbox)
    ScenarioFactory(assistant=link.assistant, key="refunds", title="Refunds", description="Refund requests")
    ScenarioFactory(assistant=link.assistant, key="shipping", title="Shipping", description="Parcels")
    conversation = ConversationFactory(
        contact_inbox__inbox=team.inbox, status="pending", ai_agent_key="refunds"
    )
    message = MessageFactory(conversation=conversation, content=f"Where is my parcel? {XSS}")
    RoutingDecision.objects.create(
        account_id=team.account.id,
        assistant=link.assistant,
        conversation=conversation,
        message=message,
        node="assistant",
        phase="after_input",
        mode="semantic",
        target="refunds",
        switched=True,
    )
    return link.assistant, conversation, message


def conversation_url(team, conversation, suffix=""):
    return f"/app/accounts/{team.account.id}/conversations/{conversation.id}/{suffix}"


def reroute(client, team, conversation, key, **kwargs):
    return client.post(conversation_url(team, conversation, "reroute/"), {"key": key}, **kwargs)


# ---- the conversation page's re-route action --------------------------------------------------------------------


def test_the_conversation_page_offers_every_node_and_shows_the_routed_message_escaped(agent_client, team, ai):
    _assistant, conversation, _message = ai

    html = agent_client.get(conversation_url(team, conversation)).content.decode()

    assert 'id="reroute-form"' in html
    assert f'action="{conversation_url(team, conversation, "reroute/")}"' in html
    options = ['value="assistant"', 'value="refunds" selected', 'value="shipping"', 'value="human"']
    assert all(option in html for option in options)
    # Plain words for agents: no "Triage (Helper)", "People (the team)" or "This should have gone to".
    assert "General questions (the AI sorts them out)" in html and "A person on the team" in html
    assert "Triage (" not in html and "People (the team)" not in html and "should have gone" not in html
    assert "as: Refunds." in html  # where the router sent the message
    assert XSS not in html and "&lt;script&gt;" in html


def test_the_form_is_not_offered_without_an_assistant_or_on_a_resolved_conversation(agent_client, team, ai):
    _assistant, conversation, _message = ai
    Conversation.objects.filter(pk=conversation.pk).update(status="resolved")
    assert 'id="reroute-form"' not in agent_client.get(conversation_url(team, conversation)).content.decode()

    without_ai = ConversationFactory(contact_inbox__inbox__account=team.account, status="pending")
    assert 'id="reroute-form"' not in agent_client.get(conversation_url(team, without_ai)).content.decode()


def test_an_agent_reroutes_the_ai_moves_there_and_the_message_is_proposed(agent_client, team, ai):
    assistant, conversation, message = ai

    response = reroute(agent_client, team, conversation, "shipping", follow=True)

    assert response.redirect_chain[-1][0] == conversation_url(team, conversation)
    html = response.content.decode()
    assert "The AI continues at Shipping" in html and "proposed as a routing example" in html
    conversation.refresh_from_db()
    assert (conversation.status, conversation.ai_agent_key) == ("pending", "shipping")
    example = RoutingExample.objects.get()
    assert (example.assistant, example.key, example.routed_to, example.signal, example.status) == (
        assistant,
        "shipping",
        "refunds",
        "reroute",
        "pending",
    )
    assert example.message == message and example.text.startswith("Where is my parcel?")


def test_rerouting_to_people_hands_the_conversation_over_like_the_ais_handoff(agent_client, team, ai):
    assistant, conversation, _message = ai

    response = reroute(agent_client, team, conversation, "human", follow=True)

    assert "Handed to the team." in response.content.decode()
    conversation.refresh_from_db()
    assert (conversation.status, conversation.ai_agent_key) == ("open", "")
    assert "re-routed the conversation to people" in conversation.escalation_reason
    told = conversation.messages.filter(message_type="outgoing", private=False).get()
    assert told.content == assistant.handoff_message
    assert not RoutingExample.objects.exists()  # people are not a node the router learns examples for


def test_rerouting_a_conversation_people_handle_hands_it_back_to_the_ai_there(agent_client, team, ai):
    _assistant, conversation, _message = ai
    Conversation.objects.filter(pk=conversation.pk).update(status="open", ai_agent_key="")

    reroute(agent_client, team, conversation, "assistant")

    conversation.refresh_from_db()
    assert (conversation.status, conversation.ai_agent_key) == ("pending", "assistant")
    assert RoutingExample.objects.get().key == "assistant"


def test_an_unknown_node_changes_nothing_and_says_which_exist(agent_client, team, ai):
    _assistant, conversation, _message = ai

    response = reroute(agent_client, team, conversation, "their_secret", follow=True)

    assert "Valid keys: assistant, refunds, shipping, human" in response.content.decode()
    conversation.refresh_from_db()
    assert conversation.ai_agent_key == "refunds" and not RoutingExample.objects.exists()


def test_rerouting_needs_a_csrf_token_and_a_post(team, ai):
    _assistant, conversation, _message = ai
    client = Client(enforce_csrf_checks=True)
    client.force_login(team.agent)

    assert reroute(client, team, conversation, "shipping").status_code == 403
    assert client.get(conversation_url(team, conversation, "reroute/")).status_code == 405
    conversation.refresh_from_db()
    assert conversation.ai_agent_key == "refunds" and not RoutingExample.objects.exists()


def test_other_tenants_and_strangers_cannot_reroute(client, team, other_team, ai):
    _assistant, conversation, _message = ai
    client.force_login(other_team.admin)
    # Their own account in the URL, our conversation: not found; our account in the URL: not a member.
    assert (
        client.post(
            f"/app/accounts/{other_team.account.id}/conversations/{conversation.id}/reroute/",
            {"key": "shipping"},
        ).status_code
        == 404
    )
    assert reroute(client, team, conversation, "shipping").status_code == 404
    client.logout()
    anonymous = reroute(client, team, conversation, "shipping")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/auth/login/")
    conversation.refresh_from_db()
    assert conversation.ai_agent_key == "refunds" and not RoutingExample.objects.exists()


# ---- the review page --------------------------------------------------------------------------------------------


def review_url(team):
    return f"/app/accounts/{team.account.id}/routing-corrections/"


@pytest.fixture
def pending(team, ai):
    assistant, conversation, message = ai
    rows = [
        RoutingExample.objects.create(
            account_id=team.account.id,
            assistant=assistant,
            key=key,
            text=text,
            source="correction",
            status="pending",
            signal=signal,
            routed_to=routed_to,
            conversation=conversation,
            message=message,
        )
        for key, text, signal, routed_to in [
            ("shipping", f"Where is my parcel? {XSS}", "reroute", "refunds"),
            ("assistant", "What are your opening hours?", "hand_back", "refunds"),
            ("refunds", "money back now", "takeover", "shipping"),
        ]
    ]
    drafted = RoutingExample.objects.create(
        account_id=team.account.id,
        assistant=assistant,
        key="refunds",
        text="I want a refund",
        source="drafted",
        status="suggested",
    )
    return assistant, conversation, rows, drafted


def post_review(client, team, assistant, **data):
    return client.post(review_url(team), {"assistant": assistant.pk, **data}, follow=True)


def test_the_review_page_lists_pending_corrections_with_their_context(admin_client, team, pending):
    _assistant, conversation, rows, _drafted = pending

    html = admin_client.get(review_url(team)).content.decode()

    assert XSS not in html and "Where is my parcel? &lt;script&gt;" in html
    assert "What are your opening hours?" in html and "money back now" in html
    assert "I want a refund" not in html  # drafted examples are reviewed elsewhere
    assert "Re-routed by a person" in html and "Handed back by a specialist" in html
    assert "Taken over after a routing decision" in html
    assert f"/app/accounts/{team.account.id}/conversations/{conversation.id}/" in html
    assert '<td class="small routed-to">Refunds</td>' in html
    # The suggested node is preselected in each row's select.
    assert f'form="accept-{rows[0].id}"' in html
    assert '<option value="shipping" selected>Shipping</option>' in html
    assert f'href="/app/accounts/{team.account.id}/routing-corrections/">Routing corrections</a>' in html


def test_accept_with_the_suggested_node_puts_it_in_use(admin_client, team, pending):
    assistant, _conversation, rows, _drafted = pending

    response = post_review(admin_client, team, assistant, op="accept", example=rows[1].id, key="assistant")

    assert "the router uses it now" in response.content.decode()
    rows[1].refresh_from_db()
    assert rows[1].status == "accepted" and rows[1].reviewed_at is not None
    assert "What are your opening hours?" in examples_in_use(assistant)["assistant"]
    assert "What are your opening hours?" not in response.content.decode()  # no longer pending


def test_accept_with_another_node_moves_the_example(admin_client, team, pending):
    assistant, _conversation, rows, _drafted = pending

    post_review(admin_client, team, assistant, op="accept", example=rows[2].id, key="shipping")

    rows[2].refresh_from_db()
    assert (rows[2].key, rows[2].status) == ("shipping", "accepted")


def test_accepting_for_a_node_that_already_has_the_text_accepts_that_one(admin_client, team, pending):
    """One example per node and text: the node's own copy is accepted, the correction is not duplicated."""
    assistant, _conversation, rows, drafted = pending
    rows[2].text = drafted.text
    rows[2].key = "shipping"
    rows[2].save()

    post_review(admin_client, team, assistant, op="accept", example=rows[2].id, key=drafted.key)

    drafted.refresh_from_db()
    assert drafted.status == "accepted"
    assert not RoutingExample.objects.filter(pk=rows[2].pk).exists()


def test_accept_refuses_a_key_that_is_not_a_node(admin_client, team, pending):
    assistant, _conversation, rows, _drafted = pending

    response = post_review(admin_client, team, assistant, op="accept", example=rows[0].id, key="human")

    assert "not one of the assistant" in response.content.decode()
    rows[0].refresh_from_db()
    assert rows[0].status == "pending"


def test_reject_one(admin_client, team, pending):
    assistant, _conversation, rows, _drafted = pending

    post_review(admin_client, team, assistant, op="reject", example=rows[0].id)

    assert RoutingExample.objects.get(pk=rows[0].id).status == "rejected"
    assert [r.status for r in RoutingExample.objects.filter(pk__in=[rows[1].id, rows[2].id])] == [
        "pending"
    ] * 2


def test_bulk_accept_keeps_each_suggested_node_and_leaves_drafted_examples_alone(admin_client, team, pending):
    assistant, _conversation, rows, drafted = pending

    response = post_review(
        admin_client, team, assistant, op="bulk", action="accept", ids=[rows[0].id, rows[1].id, drafted.id]
    )

    assert "2 corrections accepted." in response.content.decode()
    statuses = dict(RoutingExample.objects.values_list("id", "status"))
    assert statuses == {
        rows[0].id: "accepted",
        rows[1].id: "accepted",
        rows[2].id: "pending",
        drafted.id: "suggested",
    }
    assert RoutingExample.objects.get(pk=rows[0].id).key == "shipping"


def test_bulk_reject_and_an_empty_selection(admin_client, team, pending):
    assistant, _conversation, rows, _drafted = pending

    assert (
        "select at least one"
        in post_review(admin_client, team, assistant, op="bulk", action="reject").content.decode()
    )
    post_review(admin_client, team, assistant, op="bulk", action="reject", ids=[r.id for r in rows])

    assert set(RoutingExample.objects.filter(source="correction").values_list("status", flat=True)) == {
        "rejected"
    }


def test_the_review_page_is_for_administrators_only(agent_client, team, pending):
    assistant, _conversation, rows, _drafted = pending

    assert agent_client.get(review_url(team)).status_code == 403
    assert (
        agent_client.post(
            review_url(team), {"assistant": assistant.pk, "op": "reject", "example": rows[0].id}
        ).status_code
        == 403
    )
    assert RoutingExample.objects.get(pk=rows[0].id).status == "pending"
    assert (
        "Routing corrections"
        not in agent_client.get(conversation_url(team, rows[0].conversation)).content.decode()
    )


def test_another_tenants_admin_cannot_see_or_review_our_corrections(client, team, other_team, pending):
    assistant, _conversation, rows, _drafted = pending
    client.force_login(other_team.admin)

    assert client.get(review_url(team)).status_code == 404
    theirs = f"/app/accounts/{other_team.account.id}/routing-corrections/"
    assert client.get(theirs, {"assistant": assistant.pk}).status_code == 404
    assert (
        client.post(theirs, {"assistant": assistant.pk, "op": "reject", "example": rows[0].id}).status_code
        == 404
    )
    assert RoutingExample.objects.get(pk=rows[0].id).status == "pending"


def test_the_review_forms_need_a_csrf_token(team, pending):
    assistant, _conversation, rows, _drafted = pending
    client = Client(enforce_csrf_checks=True)
    client.force_login(team.admin)

    assert (
        client.post(
            review_url(team), {"assistant": assistant.pk, "op": "reject", "example": rows[0].id}
        ).status_code
        == 403
    )
    html = client.get(review_url(team)).content
    assert html.count(b'method="post"') == html.count(b"csrfmiddlewaretoken")


def test_the_review_page_without_corrections_says_where_they_come_from(admin_client, team, ai):
    html = admin_client.get(review_url(team)).content.decode()

    assert 'id="corrections-empty"' in html and "This should have gone to" in html


def test_an_agents_reroute_reaches_the_review_page_and_one_click_accepts_it(client, team, ai):
    assistant, conversation, _message = ai
    client.force_login(team.agent)
    reroute(client, team, conversation, "shipping")
    client.force_login(team.admin)

    example = RoutingExample.objects.get()
    assert f'data-example="{example.id}"' in client.get(review_url(team)).content.decode()
    post_review(client, team, assistant, op="accept", example=example.id, key="shipping")

    assert "Where is my parcel?" in examples_in_use(assistant)["shipping"][0]
