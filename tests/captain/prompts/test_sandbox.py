"""Prompt templates: builder text is a sandboxed template; SSTI payloads fail at render time, customer text
is never template source."""

from __future__ import annotations

import time

import pytest

from captain.assistants.services.agents.builder import PromptVariables, build_team
from captain.prompts import PromptTemplateError, render_builder_text
from tests.factories import AssistantFactory, ScenarioFactory

VARS = {"contact": {"name": "Ann"}, "assistant": {"name": "Captain", "product_name": "Acme"}}

SSTI_PAYLOADS = [
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ ''|attr('__class__') }}",
    "{{ self._TemplateReference__context }}",
    "{{ (9**99999999) > 1 }}",
    "{{ 'x' * 100000000 }}",
    "{{ undefined_variable }}",
    "{% for i in range(10**9) %}{% endfor %}",
    "{{ contact.name.__class__ }}",
    "{% set x = contact.update({'a': 1}) %}",
    "{{ 1/0 }}",
    "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
    "{% macro m() %}{% endmacro %}",
    "{{ contact._secret }}",
    "{{ contact.name|attr('x') }}",
    "{{ lipsum() }}",
]


@pytest.mark.parametrize("payload", SSTI_PAYLOADS)
def test_dangerous_templates_are_rejected_quickly(payload):
    started = time.monotonic()
    with pytest.raises(PromptTemplateError):
        render_builder_text(payload, **VARS)
    assert time.monotonic() - started < 2


def test_variables_render():
    assert render_builder_text("Greet {{ contact.name }} from {{ assistant.product_name }}.", **VARS) == (
        "Greet Ann from Acme."
    )


def test_conditions_and_simple_filters_are_allowed():
    text = "{% if contact.name %}Hi {{ contact.name|upper }}{% else %}Hi{% endif %}, {{ assistant.name|default('x') }}"
    assert render_builder_text(text, **VARS) == "Hi ANN, Captain"


def test_plain_text_is_returned_unchanged():
    assert render_builder_text("Be kind; 50% off", **VARS) == "Be kind; 50% off"


@pytest.mark.django_db
def test_customer_name_with_template_syntax_appears_literally():
    assistant = AssistantFactory(instructions="Call the customer {{ contact.name }}.")
    ScenarioFactory(assistant=assistant, key="refunds", instruction="Help {{ contact.name }}.")
    team = build_team(assistant, variables=PromptVariables(contact_name="{{ 7*7 }}"))
    assert "Call the customer {{ 7*7 }}." in team["assistant"].instructions
    assert "49" not in team["assistant"].instructions
    assert "Help {{ 7*7 }}." in team["refunds"].instructions
