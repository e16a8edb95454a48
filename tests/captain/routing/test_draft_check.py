"""The product's own check of whether unreviewed drafted phrases help an assistant's router (leave-one-out over
the messages whose node a person stated), and the "auto" setting that uses drafts only when they do."""

from __future__ import annotations

import pytest

from captain.routing.models import RoutingConfig, RoutingExample
from captain.routing.services import draft_check
from captain.routing.services.draft_check import drafts_check, labelled_messages
from captain.routing.services.routing import routing_enable_default, routing_graph, routing_node_examples_set
from captain.routing.services.routing_examples import review_examples
from tests.factories import ScenarioFactory

from .support import KeywordEncoder, own_calibrator

pytestmark = pytest.mark.django_db

Source = RoutingExample.Source
Status = RoutingExample.Status
ENCODER = KeywordEncoder(["refund", "parcel", "invoice"])


@pytest.fixture(autouse=True)
def _own_calibrator(monkeypatch):
    own_calibrator(monkeypatch)


@pytest.fixture
def assistant(settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "ROUTING_UNREVIEWED_DRAFTS": "auto"}
    refunds = ScenarioFactory(title="Refunds", key="refunds", description="Money returns.")
    assistant = refunds.assistant
    ScenarioFactory(assistant=assistant, title="Shipping", key="shipping", description="Where things are.")
    ScenarioFactory(assistant=assistant, title="Billing", key="billing", description="Bills and statements.")
    routing_enable_default(assistant=assistant)
    return assistant


def add(assistant, key, text, *, status=Status.SUGGESTED, source=Source.DRAFTED):
    return RoutingExample.objects.create(
        account_id=assistant.account_id, assistant=assistant, key=key, text=text, source=source, status=status
    )


def accepted(assistant):
    """One accepted correction per node, its keyword in it: without it the node has only its description."""
    for key, text in [
        ("refunds", "the refund never came"),
        ("shipping", "the parcel is lost"),
        ("billing", "wrong invoice sent"),
    ]:
        add(assistant, key, text, source=Source.CORRECTION, status=Status.ACCEPTED)


def test_drafts_that_route_the_known_messages_right_are_used_and_the_figures_kept(assistant, monkeypatch):
    monkeypatch.setattr(draft_check, "MIN_LABELLED", 3)
    accepted(assistant)
    for key, word in [("refunds", "refund"), ("shipping", "parcel"), ("billing", "invoice")]:
        add(assistant, key, f"a question about my {word}")
        add(assistant, key, f"help with the {word} please")
    assert routing_graph(assistant).nodes["refunds"].examples == ["the refund never came"]  # not checked yet

    check = drafts_check(assistant=assistant, encoder=ENCODER)

    assert check is not None and (check.labelled, check.drafts) == (3, 6)
    assert check.right_with == 3 and check.right_without < 3, check
    assert check.helps
    kept = RoutingConfig.objects.get(assistant=assistant).drafts_check
    assert kept["helps"] is True and kept["right_with"] == 3 and kept["checked_at"]
    assert "a question about my refund" in routing_graph(assistant).nodes["refunds"].examples


def test_drafts_that_mislead_stay_suggestions(assistant, monkeypatch):
    monkeypatch.setattr(draft_check, "MIN_LABELLED", 3)
    accepted(assistant)
    # Drafted for the wrong nodes: each pulls another node's customers towards it.
    add(assistant, "refunds", "where is my parcel")
    add(assistant, "shipping", "send me an invoice")
    add(assistant, "billing", "I want a refund for my order")

    check = drafts_check(assistant=assistant, encoder=ENCODER)

    assert check is not None and check.right_with <= check.right_without and not check.helps
    assert routing_graph(assistant).nodes["refunds"].examples == ["the refund never came"]


def test_too_few_known_messages_give_no_verdict(assistant):
    accepted(assistant)  # 3 labelled, fewer than MIN_LABELLED
    add(assistant, "refunds", "I want a refund for my order")
    check = drafts_check(assistant=assistant, encoder=ENCODER)
    assert check is not None and check.labelled == 3 and not check.helps
    assert (check.right_without, check.right_with) == (0, 0)  # not run


def test_the_builders_examples_and_accepted_examples_are_the_known_messages(assistant):
    routing_node_examples_set(assistant=assistant, key="billing", examples=["invoice copy please", " "])
    accepted(assistant)
    add(assistant, "shipping", "a rejected one", status=Status.REJECTED)
    add(assistant, "shipping", "a suggestion", status=Status.SUGGESTED)
    assert sorted(labelled_messages(assistant)) == [
        ("invoice copy please", "billing"),
        ("the parcel is lost", "shipping"),
        ("the refund never came", "refunds"),
        ("wrong invoice sent", "billing"),
    ]


def test_accepting_an_example_queues_the_check(assistant, django_capture_on_commit_callbacks, monkeypatch):
    queued: list[int] = []

    class Task:
        def delay(self, assistant_id: int) -> None:
            queued.append(assistant_id)

    monkeypatch.setattr("captain.routing.services.routing_examples.task", lambda name: Task())
    row = add(assistant, "refunds", "money back please", source=Source.CORRECTION, status=Status.PENDING)
    with django_capture_on_commit_callbacks(execute=True):
        review_examples(assistant=assistant, ids=[row.pk], accept=False)
    assert queued == []
    with django_capture_on_commit_callbacks(execute=True):
        review_examples(assistant=assistant, ids=[row.pk], accept=True)
    assert queued == [assistant.pk]


def test_the_admin_says_what_the_check_found(assistant, monkeypatch):
    from django.contrib import admin

    from captain.routing.admin import RoutingConfigInline

    inline = RoutingConfigInline(RoutingConfig, admin.site)
    config = RoutingConfig.objects.get(assistant=assistant)
    assert inline.drafted_phrases(config).startswith("Not checked yet")
    monkeypatch.setattr(draft_check, "MIN_LABELLED", 3)
    accepted(assistant)
    for key, word in [("refunds", "refund"), ("shipping", "parcel"), ("billing", "invoice")]:
        add(assistant, key, f"a question about my {word}")
        add(assistant, key, f"help with the {word} please")
    drafts_check(assistant=assistant, encoder=ENCODER)
    config.refresh_from_db()
    said = inline.drafted_phrases(config)
    assert said.startswith("in use.") and "on 3 messages whose team is known: 3 routed right" in said
