"""Builder templates cannot exhaust the server: the payloads that stalled a save request (a `**` chain, widths
of 50,000,000) are refused by the one template policy in well under a second, for every builder template, and
the sandbox bounds every render anyway (time, output size, each operation's result) for text that gets past
the policy."""

from __future__ import annotations

import time

import pytest
from jinja2.exceptions import SecurityError
from rest_framework.test import APIClient

from captain.actions.models import CustomTool
from captain.assistants.models import Assistant
from captain.prompts import PromptTemplateError
from captain.prompts.builder_text import render_builder_text, validate_builder_text
from captain.prompts.policy import check_tool_template
from captain.prompts.sandbox import MAX_RENDERED_CHARS, RENDER_SECONDS, env, render
from helpdesk.models import Membership
from tests.factories import AssistantFactory, MembershipFactory

POWER_CHAIN = "{{ (9**100**100**100**100) % 7 }}"
WIDE = [
    "{{ 'x'|center(50000000) }}",
    "{{ '%s'|format(1) }}",
    "{{ '%50000000d'|format(1) }}",
    "{{ 'x'|indent(50000000) }}",
    "{{ '%50000000d' % 1 }}",
]
PAYLOADS = [POWER_CHAIN, *WIDE]


def timed(call) -> tuple[Exception | None, float]:
    started = time.monotonic()
    try:
        call()
    except Exception as exc:
        return exc, time.monotonic() - started
    return None, time.monotonic() - started


@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_tool_template_policy_refuses_power_chains_and_widths_at_once(payload):
    error, seconds = timed(lambda: check_tool_template(payload, []))
    assert isinstance(error, PromptTemplateError)
    assert seconds < 1.0


@pytest.mark.parametrize("payload", PAYLOADS)
def test_instructions_refuse_the_same_payloads_at_once(payload):
    error, seconds = timed(lambda: validate_builder_text(f"You are helpful. {payload}"))
    assert isinstance(error, PromptTemplateError)
    assert seconds < 1.0


@pytest.mark.parametrize(
    ("source", "named"),
    [
        ("{{ 2 ** 3 }}", "'**'"),
        ("{{ 7 % 3 }}", "'%'"),
        ("{% for i in range(9) %}{% endfor %}", "call"),
        ("{% for a in response %}{% for b in a %}{% endfor %}{% endfor %}", "loops inside loops"),
        ("{{ response|tojson(50000000) }}", "takes no arguments"),
        ("{{ response|map('center', 50000000)|join }}", "map() may only apply an allowed filter"),
        ("{{ response|wordwrap(5) }}", "filter 'wordwrap'"),
        ("{{ response|batch(5) }}", "filter 'batch'"),
        ("{{ response is callable }}", "test 'callable'"),
        ("{% set x = 1 %}", "'Assign'"),
    ],
)
def test_the_tool_template_policy_names_what_it_refuses(source, named):
    with pytest.raises(PromptTemplateError) as refused:
        check_tool_template(source, ["response"])
    assert named in str(refused.value)


def test_a_tool_template_may_still_loop_once_filter_and_compute():
    source = (
        "{% for o in response.orders if o.open %}{{ loop.index }}. {{ o.id|upper }} "
        "{{ (o.total * 100)|round|int }}{% if not loop.last %}, {% endif %}{% endfor %}; "
        "{{ response.orders|map(attribute='id')|join('/') }} {{ response.orders|length }} {{ response|tojson }}"
    )
    check_tool_template(source, ["response"])
    data = {"orders": [{"id": "a1", "open": True, "total": 1.5}, {"id": "b2", "open": False, "total": 2}]}
    shown = render(env.from_string(source), {"response": data})
    assert shown.startswith("1. A1 150; a1/b2 2 {")


# ---- the sandbox bounds a render even when the policy is bypassed -------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        POWER_CHAIN,
        "{{ ((9**100)**100)**100 }}",
        "{{ " + " * ".join(["10**100"] * 13) + " }}",  # each product small, the chain past 4,096 bits
        *WIDE,
        "{{ 'x'|indent('y' * 5000) }}",
        "{{ ('a' * 9000)|replace('a', 'b' * 9000) }}",
        "{{ ('a' * 9000)|list|join('b' * 9000) }}",
        "{{ {'a': 1}|tojson(50000000) }}",
        "{{ 'x y'|wordwrap(1, wrapstring='z' * 5000) }}",
    ],
)
def test_the_sandbox_refuses_a_huge_value_before_building_it(source):
    error, seconds = timed(lambda: render(env.from_string(source), {}))
    assert isinstance(error, SecurityError), error
    assert seconds < 0.1


def test_a_render_stops_at_its_time_budget():
    nested = "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"
    error, seconds = timed(lambda: render(env.from_string(nested), {}))
    assert isinstance(error, SecurityError)
    assert "CPU time" in str(error)
    assert RENDER_SECONDS <= seconds < 5  # CPU time is bounded; wall time depends on what else runs


def test_a_render_stops_at_the_output_cap_while_streaming():
    source = "{% for i in range(99999) %}" + "x" * 100 + "{% endfor %}"
    with pytest.raises(PromptTemplateError, match=f"exceeds {MAX_RENDERED_CHARS}"):
        render(env.from_string(source), {})


def test_stored_instructions_that_break_the_policy_are_refused_at_render_time():
    # Text stored before the policy (written straight to the database) still never renders unchecked.
    with pytest.raises(PromptTemplateError, match="is not allowed in instructions"):
        render_builder_text(f"Hello {POWER_CHAIN}", contact={"name": "Ann"})


# ---- through the API: refused in the save request, nothing stored --------------------------------------------


def tool_body(**fields) -> dict:
    return {
        "name": "order_status",
        "description": "Look up an order's status.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        "url_template": "https://shop.example/orders/{{ order_id }}",
        **fields,
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "payload"),
    [
        ("url_template", "https://shop.example/" + POWER_CHAIN),
        ("response_template", POWER_CHAIN),
        ("confirmation_template", POWER_CHAIN),
        *[("url_template", "https://shop.example/" + wide) for wide in WIDE],
        *[("response_template", wide) for wide in WIDE],
    ],
)
def test_the_custom_tool_api_refuses_the_payloads_in_under_a_second_and_stores_nothing(field, payload):
    admin = MembershipFactory(role=Membership.Role.ADMIN)
    api = APIClient()
    api.force_authenticate(admin.user)
    started = time.monotonic()
    answer = api.post(
        f"/api/v1/captain/accounts/{admin.account_id}/custom-tools/",
        tool_body(**{field: payload}),
        format="json",
    )
    assert time.monotonic() - started < 1.0
    assert answer.status_code == 400, answer.content
    assert field in answer.json()
    assert not CustomTool.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_assistant_api_refuses_the_payloads_in_instructions(payload):
    admin = MembershipFactory(role=Membership.Role.ADMIN)
    assistant = AssistantFactory(account=admin.account)
    before = assistant.instructions
    api = APIClient()
    api.force_authenticate(admin.user)
    started = time.monotonic()
    answer = api.patch(
        f"/api/v1/captain/accounts/{admin.account_id}/assistants/{assistant.pk}/",
        {"instructions": f"Be kind. {payload}"},
        format="json",
    )
    assert time.monotonic() - started < 1.0
    assert answer.status_code == 400, answer.content
    assert Assistant.objects.get(pk=assistant.pk).instructions == before
