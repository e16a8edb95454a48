"""The runtime context and the declaration the check uses are the same set of paths, with the declared kinds."""

from __future__ import annotations

import re

import pytest

from captain.assistants.services.agents.builder import PromptVariables
from captain.prompts import PROMPT_VARIABLES, prompt_context
from captain.prompts.variables import leaf_paths, sample_contexts
from tests.factories import AssistantFactory

DECLARED = {variable.path for variable in PROMPT_VARIABLES}
PYTHON_TYPES = {"string": str, "number": (int, float), "boolean": bool}


def values_at(context, path):
    for part in path.split("."):
        context = context[part]
    return context


@pytest.mark.django_db
def test_the_context_build_team_renders_with_has_exactly_the_declared_paths():
    assistant = AssistantFactory(name="Captain", product_name="Acme")

    context = PromptVariables(contact_name="Ann").as_dict(assistant)

    assert leaf_paths(context) == DECLARED
    for variable in PROMPT_VARIABLES:
        assert isinstance(values_at(context, variable.path), PYTHON_TYPES[variable.kind]), variable.path
    assert values_at(context, "contact.name") == "Ann"
    assert values_at(context, "assistant.product_name") == "Acme"


def test_samples_have_exactly_the_declared_paths():
    for context in sample_contexts():
        assert leaf_paths(context) == DECLARED


def test_an_undeclared_or_missing_path_is_a_programming_error():
    full = {path: "x" for path in DECLARED}
    with pytest.raises(ValueError, match=re.escape("undeclared ['contact.email']")):
        prompt_context({**full, "contact.email": "a@b.c"})
    with pytest.raises(ValueError, match=re.escape("missing ['contact.name']")):
        prompt_context({path: "x" for path in DECLARED - {"contact.name"}})
    with pytest.raises(TypeError, match=re.escape("contact.name must be a string")):
        prompt_context({**full, "contact.name": 3})
