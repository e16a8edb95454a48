"""The routing example admin and the drafted-examples inline on the assistant page: scoped to the accounts the
staff user administers; accept, reject and adopt actions through the services; only the text is editable, and
editing a drafted suggestion accepts it."""

from __future__ import annotations

import pytest
from django.test import Client

from captain.routing.models import RoutingExample, RoutingNode
from captain.routing.services.routing import routing_node_examples_set
from helpdesk.models import Membership
from tests.factories import AssistantFactory, MembershipFactory, ScenarioFactory, UserFactory
from tests.helpdesk.test_admin import admin_form_data

pytestmark = pytest.mark.django_db

LIST_URL = "/admin/captain/routingexample/"
Source = RoutingExample.Source
Status = RoutingExample.Status


@pytest.fixture
def staff():
    user = UserFactory(is_staff=True)
    user.save()
    membership = MembershipFactory(user=user, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(user)
    return client, membership.account


@pytest.fixture
def refunds(staff):
    _, account = staff
    return ScenarioFactory(assistant=AssistantFactory(account=account), key="refunds", title="Refunds")


def example(scenario, text, *, source=Source.DRAFTED, status=Status.SUGGESTED):
    return RoutingExample.objects.create(
        account_id=scenario.assistant.account_id,
        assistant=scenario.assistant,
        key=scenario.key,
        text=text,
        source=source,
        status=status,
    )


def test_the_list_shows_only_the_staffs_accounts_and_filters_by_source_and_status(staff, refunds):
    client, _ = staff
    example(refunds, "Drafted one")
    example(refunds, "Corrected one", source=Source.CORRECTION, status=Status.PENDING)
    example(ScenarioFactory(key="refunds"), "Another tenant's")

    everything = client.get(LIST_URL).content.decode()
    corrections = client.get(LIST_URL, {"source__exact": "correction"}).content.decode()
    suggested = client.get(LIST_URL, {"status__exact": "suggested", "q": "one"}).content.decode()

    assert "Drafted one" in everything and "Corrected one" in everything
    assert "Another tenant&#x27;s" not in everything and "Another tenant's" not in everything
    assert "Corrected one" in corrections and "Drafted one" not in corrections
    assert "Drafted one" in suggested and "Corrected one" not in suggested


def test_accept_and_reject_actions_change_only_the_staffs_examples(staff, refunds):
    client, _ = staff
    mine = [example(refunds, "one"), example(refunds, "two")]
    theirs = example(ScenarioFactory(key="refunds"), "theirs")

    response = client.post(
        LIST_URL, {"action": "accept_selected", "_selected_action": [mine[0].pk, theirs.pk]}, follow=True
    )
    client.post(LIST_URL, {"action": "reject_selected", "_selected_action": [mine[1].pk]})

    assert "1 routing example(s) accepted." in response.content.decode()
    assert dict(RoutingExample.objects.values_list("pk", "status")) == {
        mine[0].pk: "accepted",
        mine[1].pk: "rejected",
        theirs.pk: "suggested",
    }


def test_adopt_appends_drafts_to_the_nodes_examples_and_skips_corrections(staff, refunds):
    client, _ = staff
    routing_node_examples_set(assistant=refunds.assistant, key="refunds", examples=["Refund please"])
    drafted = example(refunds, "I want my money back")
    correction = example(refunds, "money back?", source=Source.CORRECTION, status=Status.PENDING)

    response = client.post(
        LIST_URL, {"action": "adopt_selected", "_selected_action": [drafted.pk, correction.pk]}, follow=True
    )

    page = response.content.decode()
    assert "1 drafted example(s) added to their node&#x27;s examples and accepted." in page
    assert "1 correction(s) skipped" in page
    assert RoutingNode.objects.get(assistant=refunds.assistant, key="refunds").examples == [
        "Refund please",
        "I want my money back",
    ]
    assert dict(RoutingExample.objects.values_list("pk", "status")) == {
        drafted.pk: "accepted",
        correction.pk: "pending",
    }


def test_only_the_text_is_editable_and_editing_a_suggestion_accepts_it(staff, refunds):
    client, _ = staff
    drafted = example(refunds, "refnd pls")
    change = f"{LIST_URL}{drafted.pk}/change/"

    page = client.get(change).content.decode()
    client.post(change, {"text": "Refund  me please", "status": "rejected", "key": "hijacked"})

    assert 'name="text"' in page and 'name="status"' not in page and 'name="key"' not in page
    drafted.refresh_from_db()
    assert (drafted.key, drafted.text, drafted.status) == ("refunds", "Refund me please", "accepted")
    assert client.get(f"{LIST_URL}add/").status_code == 403


def test_a_duplicate_text_on_the_node_is_a_form_error(staff, refunds):
    client, _ = staff
    drafted = example(refunds, "refnd pls")
    example(refunds, "Refund please", status=Status.REJECTED)

    response = client.post(f"{LIST_URL}{drafted.pk}/change/", {"text": "Refund please"})

    assert "This node already has this example." in response.content.decode()
    assert RoutingExample.objects.get(pk=drafted.pk).text == "refnd pls"


def test_another_tenants_example_page_is_not_found(staff):
    client, _ = staff
    theirs = example(ScenarioFactory(key="refunds"), "theirs")

    response = client.get(f"{LIST_URL}{theirs.pk}/change/")

    assert response.status_code in (302, 404)  # the admin redirects a missing object to its index
    assert "theirs" not in client.get(LIST_URL).content.decode()


def test_the_assistant_page_lists_drafted_suggestions_and_saves_an_edited_one(staff, refunds):
    client, _ = staff
    drafted = example(refunds, "refnd pls")
    example(refunds, "A correction", source=Source.CORRECTION, status=Status.PENDING)
    change = f"/admin/captain/assistant/{refunds.assistant_id}/change/"

    page = client.get(change)

    html = page.content.decode()
    assert "drafted routing examples" in html.lower() and "refnd pls" in html and "A correction" not in html
    data = admin_form_data(page) | {"routing_examples-0-text": "Refund please"}
    response = client.post(change, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    drafted.refresh_from_db()
    assert (drafted.text, drafted.status) == ("Refund please", "accepted")
