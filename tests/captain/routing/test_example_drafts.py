"""Drafted routing examples: the assistant's model (the scripted server over real HTTP) writes customer-style
messages per scenario node; they are stored as suggestions, deduplicated against other nodes, replaced on a
redraft without touching reviewed rows or corrections, skipped when the scenario did not change, and used by the
router only for nodes without builder examples."""

from __future__ import annotations

import json
import logging

import pytest
from django.core.exceptions import ValidationError

from captain.routing.models import RoutingExample, RoutingNode
from captain.routing.services import example_drafts
from captain.routing.services.example_draft_prompt import parse_examples
from captain.routing.services.example_drafts import (
    draft_examples,
    drafted_examples_adopt,
    routing_example_edit,
    scenario_texts_hash,
    store_drafts,
)
from captain.routing.services.routing import routing_enable_default, routing_graph, routing_node_examples_set
from tests.factories import ScenarioFactory
from tests.support import fake_llm_server as fake

pytestmark = pytest.mark.django_db

Source = RoutingExample.Source
Status = RoutingExample.Status


def answer(*examples: str) -> fake.TextStep:
    return fake.text(json.dumps({"examples": list(examples)}, ensure_ascii=False))


@pytest.fixture
def model(llm_settings):
    return llm_settings


@pytest.fixture
def refunds():
    return ScenarioFactory(
        title="Refunds",
        key="refunds",
        description="The customer wants their money back for an order.",
        instruction="Ask for the order number, then explain the refund policy.",
    )


def example(scenario, text, *, source=Source.DRAFTED, status=Status.SUGGESTED, key=None, drafted_from=""):
    return RoutingExample.objects.create(
        account_id=scenario.assistant.account_id,
        assistant=scenario.assistant,
        key=key or scenario.key,
        text=text,
        source=source,
        status=status,
        drafted_from=drafted_from,
    )


def rows(scenario):
    return list(
        RoutingExample.objects.filter(assistant=scenario.assistant, key=scenario.key)
        .order_by("id")
        .values_list("text", "source", "status")
    )


# ---- drafting -----------------------------------------------------------------------------------------------


def test_drafts_are_stored_as_suggestions_of_the_node_with_the_texts_hash(model, refunds):
    model.push(answer("I want my money back", "我要退款", "Can I get a refnd for my order?"))

    assert store_drafts(refunds) == 3

    assert rows(refunds) == [
        ("I want my money back", "drafted", "suggested"),
        ("我要退款", "drafted", "suggested"),
        ("Can I get a refnd for my order?", "drafted", "suggested"),
    ]
    stored = RoutingExample.objects.filter(key="refunds")
    assert {(r.account_id, r.drafted_from) for r in stored} == {
        (refunds.assistant.account_id, scenario_texts_hash(refunds))
    }


def test_the_request_names_the_scenario_the_languages_and_asks_for_a_json_schema(model, refunds, settings):
    ScenarioFactory(assistant=refunds.assistant, title="Shipping", key="shipping")
    settings.CAPTAIN = {**settings.CAPTAIN, "ROUTING_EXAMPLE_DRAFTS_PER_LANGUAGE": 7}
    model.push(answer("I want my money back"))

    draft_examples(refunds)

    request = model.requests[0]
    system, user = (m["content"] for m in request["messages"])
    assert "7 messages" in system and "English, Simplified Chinese" in system
    assert "Refunds" in user and refunds.description in user and refunds.instruction in user
    assert "Other specialists (not this one): Shipping" in user
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["schema"]["required"] == ["examples"]
    assert request["max_tokens"] == 40 + 48 * 14


def test_a_scenario_written_in_another_language_adds_that_language(model, settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "ROUTING_EXAMPLE_LANGUAGES": ["en"]}
    scenario = ScenarioFactory(title="退款", description="客户想退款", instruction="Help.")
    model.push(answer("我要退款"))

    draft_examples(scenario)

    assert "English, Simplified Chinese" in model.requests[0]["messages"][0]["content"]


@pytest.mark.parametrize(
    "answer_step",
    [
        fake.text("I am sorry, I cannot help with that."),
        fake.text('{"examples": ["unterminated'),
        fake.text("[1, 2, 3]"),
        fake.text('{"examples": "not a list"}'),
        fake.text(""),
        fake.invalid_json(),
        fake.error(500),
    ],
    ids=[
        "one-line-prose",
        "broken-json",
        "wrong-items",
        "wrong-shape",
        "empty",
        "invalid-http-body",
        "http-500",
    ],
)
def test_bad_model_output_drafts_nothing_logs_a_warning_and_does_not_raise(
    model, refunds, answer_step, caplog
):
    model.push(answer_step)

    with caplog.at_level(logging.WARNING, logger="captain.routing.services.example_drafts"):
        assert store_drafts(refunds) == 0

    assert not RoutingExample.objects.exists()
    assert any(r.levelno == logging.WARNING for r in caplog.records)


def test_an_unavailable_model_endpoint_drafts_nothing(refunds, caplog):
    refunds.assistant.model_endpoint = "gone"
    refunds.assistant.save()

    with caplog.at_level(logging.WARNING, logger="captain.routing.services.example_drafts"):
        assert store_drafts(refunds) == 0

    assert not RoutingExample.objects.exists()
    assert "model failed" in caplog.text


def test_an_answer_that_ignores_the_format_is_read_one_example_per_line():
    content = (
        "Here are some examples:\n"
        "1. I want my money back\n"
        '- "Can I return this and get a refund?"\n'
        "* 我要退款\n"
        "English:\n"
        "```\n"
    )

    assert parse_examples(content) == [
        "I want my money back",
        "Can I return this and get a refund?",
        "我要退款",
    ]


def test_parsing_keeps_fenced_json_drops_repeats_and_overlong_texts():
    content = (
        "Sure!\n```json\n"
        + json.dumps({"en": ["Refund please", "REFUND, please!", "x" * 201], "zh": ["我要退款", 42]})
        + "\n```"
    )

    assert parse_examples(content) == ["Refund please", "我要退款"]


def test_examples_of_other_nodes_are_dropped_case_and_punctuation_aside(model, refunds):
    assistant = refunds.assistant
    shipping = ScenarioFactory(assistant=assistant, title="Shipping", key="shipping")
    routing_node_examples_set(assistant=assistant, key="shipping", examples=["Where is my order?"])
    example(shipping, "My parcel never arrived", source=Source.CORRECTION, status=Status.PENDING)
    model.push(
        answer(
            "where is my order",
            "My parcel never arrived!",
            "I want my money back",
            "i want my money back.",
        )
    )

    assert store_drafts(refunds) == 1

    assert rows(refunds) == [("I want my money back", "drafted", "suggested")]


def test_a_redraft_replaces_only_untouched_suggestions(model, refunds):
    example(refunds, "old suggestion", drafted_from="old")
    accepted = example(refunds, "accepted draft", status=Status.ACCEPTED, drafted_from="old")
    rejected = example(refunds, "rejected draft", status=Status.REJECTED, drafted_from="old")
    correction = example(refunds, "a correction", source=Source.CORRECTION, status=Status.PENDING)
    model.push(answer("rejected draft", "accepted draft", "a brand new one"))

    assert store_drafts(refunds) == 1

    assert rows(refunds) == [
        ("accepted draft", "drafted", "accepted"),
        ("rejected draft", "drafted", "rejected"),
        ("a correction", "correction", "pending"),
        ("a brand new one", "drafted", "suggested"),
    ]
    assert {accepted.pk, rejected.pk, correction.pk} <= set(
        RoutingExample.objects.values_list("pk", flat=True)
    )


def test_a_text_the_builder_already_wrote_for_the_node_is_not_suggested_again(model, refunds):
    routing_node_examples_set(assistant=refunds.assistant, key="refunds", examples=["Refund please"])
    model.push(answer("refund please", "Give me my money back"))

    assert store_drafts(refunds, force=True) == 1

    assert rows(refunds) == [("Give me my money back", "drafted", "suggested")]


def test_unchanged_texts_are_not_drafted_again_unless_forced(model, refunds):
    model.push(answer("I want my money back"))
    assert store_drafts(refunds) == 1

    assert store_drafts(refunds) == 0
    assert len(model.requests) == 1  # no model call at all

    refunds.description = "The customer wants a refund or a credit note."
    refunds.save()
    model.push(answer("Can I get a credit note?"))
    assert store_drafts(refunds) == 1
    assert rows(refunds) == [("Can I get a credit note?", "drafted", "suggested")]

    model.push(answer("Refund it"))
    assert store_drafts(refunds, force=True) == 1
    assert len(model.requests) == 3


def test_drafts_of_texts_that_changed_while_the_model_was_writing_are_discarded(refunds, monkeypatch):
    def edited_meanwhile(scenario):
        type(scenario).objects.filter(pk=scenario.pk).update(title="Returns")
        return ["I want my money back"]

    monkeypatch.setattr(example_drafts, "draft_examples", edited_meanwhile)

    assert store_drafts(refunds) == 0

    assert not RoutingExample.objects.exists()


def test_drafting_turned_off_or_a_disabled_scenario_calls_no_model(model, refunds, settings):
    refunds.enabled = False
    refunds.save()
    assert store_drafts(refunds) == 0

    settings.CAPTAIN = {**settings.CAPTAIN, "ROUTING_EXAMPLE_DRAFTS": False}
    refunds.enabled = True
    assert store_drafts(refunds, force=True) == 0

    assert model.requests == []


# ---- the router's view ------------------------------------------------------------------------------------


def test_the_run_graph_uses_unreviewed_drafts_only_when_allowed_and_for_nodes_without_builder_examples(
    refunds, settings
):
    settings.CAPTAIN = {**settings.CAPTAIN, "ROUTING_UNREVIEWED_DRAFTS": True}
    assistant = refunds.assistant
    routing_enable_default(assistant=assistant)
    shipping = ScenarioFactory(assistant=assistant, title="Shipping", key="shipping")
    routing_node_examples_set(assistant=assistant, key="shipping", examples=["Where is my order?"])
    example(refunds, "I want my money back")
    example(shipping, "Has my parcel shipped?")

    graph = routing_graph(assistant)

    assert graph is not None
    assert graph.nodes["refunds"].examples == ["I want my money back"]
    assert graph.nodes["shipping"].examples == ["Where is my order?"]


def test_by_default_a_drafted_phrase_routes_only_once_a_person_accepted_it(refunds):
    assistant = refunds.assistant
    routing_enable_default(assistant=assistant)
    example(refunds, "I want my money back")
    accepted = example(refunds, "refund please", status=Status.ACCEPTED)

    graph = routing_graph(assistant)

    assert graph is not None
    assert graph.nodes["refunds"].examples == [accepted.text]


# ---- review -------------------------------------------------------------------------------------------------


def test_editing_a_drafted_suggestion_accepts_it_and_a_correction_keeps_waiting(refunds):
    drafted = example(refunds, "refnd pls")
    correction = example(refunds, "money back?", source=Source.CORRECTION, status=Status.PENDING)

    routing_example_edit(example=drafted, text="  Refund   please ")
    routing_example_edit(example=correction, text="Money back, please?")

    assert rows(refunds) == [
        ("Refund please", "drafted", "accepted"),
        ("Money back, please?", "correction", "pending"),
    ]
    with pytest.raises(ValidationError):
        routing_example_edit(example=correction, text="Refund please")
    with pytest.raises(ValidationError):
        routing_example_edit(example=correction, text="   ")


def test_adopting_drafts_appends_them_to_the_builders_examples_and_accepts_them(refunds):
    assistant = refunds.assistant
    routing_node_examples_set(assistant=assistant, key="refunds", examples=["Refund please"])
    drafts = [example(refunds, "refund please!"), example(refunds, "I want my money back")]
    correction = example(refunds, "money back?", source=Source.CORRECTION, status=Status.PENDING)
    theirs = example(ScenarioFactory(key="refunds"), "Someone else's")

    result = drafted_examples_adopt(
        assistant=assistant, ids=[d.pk for d in drafts] + [correction.pk, theirs.pk]
    )

    assert result.adopted == 2 and result.refused == []
    assert RoutingNode.objects.get(assistant=assistant, key="refunds").examples == [
        "Refund please",
        "I want my money back",
    ]
    statuses = dict(RoutingExample.objects.values_list("pk", "status"))
    assert [statuses[d.pk] for d in drafts] == ["accepted", "accepted"]
    assert (statuses[correction.pk], statuses[theirs.pk]) == ("pending", "suggested")


def test_adopting_drafts_of_a_disabled_scenario_is_refused_with_the_reason(refunds):
    draft = example(refunds, "I want my money back")
    refunds.enabled = False
    refunds.save()

    result = drafted_examples_adopt(assistant=refunds.assistant, ids=[draft.pk])

    assert result.adopted == 0
    assert result.refused and "disabled" in result.refused[0]
    assert RoutingExample.objects.get().status == "suggested"
