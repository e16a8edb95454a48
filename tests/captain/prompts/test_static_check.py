"""The static template check reads every branch: a variable must be a declared value wherever it appears, not
only on the path one sample render happens to take."""

from __future__ import annotations

import pytest

from captain.prompts import PROMPT_VARIABLES, PromptTemplateError, check_builder_template, render_builder_text
from captain.prompts.variables import sample_contexts

AVAILABLE = "available: contact.name, assistant.name, assistant.product_name"

REFUSED = [
    # (template, the message must contain)
    (
        "{% if contact.name == 'x' %}ok{% else %}{{ contact.missing }}{% endif %}",
        f"unknown variable 'contact.missing'; {AVAILABLE}",
    ),
    (
        "{{ contact.name.format }}",
        f"unknown variable 'contact.name.format': contact.name is a string and has no attribute 'format'; {AVAILABLE}",
    ),
    ("{{ contact.name.upper }}", "for the filter write {{ contact.name|upper }}"),
    ("{{ contact['name']['format'] }}", "unknown variable 'contact.name.format'"),
    ("{% if contact.name %}hi{% elif contact.nick %}yo{% endif %}", "unknown variable 'contact.nick'"),
    ("{{ 'a' if contact.name else contact.email }}", "unknown variable 'contact.email'"),
    ("{{ contact.email if contact.name else 'a' }}", "unknown variable 'contact.email'"),
    ("{{ 'a' if contact.phone else 'b' }}", "unknown variable 'contact.phone'"),
    ("{{ contact.missing|default('there') }}", "unknown variable 'contact.missing'"),
    ("{{ contact.name|default(contact.nick) }}", "unknown variable 'contact.nick'"),
    ("{% if contact.name == customer.name %}same{% endif %}", "unknown variable 'customer.name'"),
    ("{% if not contact.vip %}x{% endif %}", "unknown variable 'contact.vip'"),
    ("{{ contact.name ~ contact.surname }}", "unknown variable 'contact.surname'"),
    ("{{ contact.items }}", "unknown variable 'contact.items'"),  # a dict method, not a declared key
    ("{{ contact }}", f"'contact' is a group of variables, not a value; {AVAILABLE}"),
    ("{{ product_name }}", f"unknown variable 'product_name'; {AVAILABLE}"),
    ("{{ contact[assistant.name] }}", "only a quoted name may follow '['"),
    ("{{ contact.name[0] }}", "only a quoted name may follow '['"),
    ("{{ 'abc'.upper }}", "'.' and '[...]' may only follow a variable name"),
    ("{{ 'hi' if contact.name }}", "an inline 'if' needs an 'else'"),
    ("{% if contact.name > 3 %}x{% endif %}", "cannot compare a string with a number using '>'"),
    ("{% if 3 in contact.name %}x{% endif %}", "cannot compare a number with a string using 'in'"),
    ("{% if (contact.name or 1) < 'm' %}x{% endif %}", "cannot compare a number with a string using '<'"),
    ("{{ contact._secret }}", "names starting with '_' are not allowed"),
    ("{{ contact['_secret'] }}", "names starting with '_' are not allowed"),
    ("{{ _private }}", "names starting with '_' are not allowed"),
    ("{{ 1/0 }}", "'Div' is not allowed"),
    ("{{ contact.name|attr('x') }}", "filter 'attr' is not allowed"),
]


@pytest.mark.parametrize(("template", "message"), REFUSED)
def test_refused_with_the_path_named(template, message):
    with pytest.raises(PromptTemplateError) as caught:
        check_builder_template(template)
    assert message in str(caught.value)


ACCEPTED = [
    "{{ contact.name | default('there') }}",
    "{% if contact.name %}Hi {{ contact.name }}{% endif %}",
    "{{ contact['name'] }}",
    "{% if contact['name'] == 'Ann' %}Hi Ann{% else %}Hello {{ assistant['product_name']|upper }}{% endif %}",
    "{{ 'dear ' ~ contact.name if contact.name else 'there' }}",
    "{% if 'VIP' in contact.name and not assistant.product_name %}vip{% elif contact.name < 'M' %}a-l{% endif %}",
    "{{ (contact.name or assistant.name)|title }}",
    "{% if contact.name != 3 %}any two values compare with ==/!={% endif %}",
    "Plain text with a lone { brace",
]


@pytest.mark.parametrize("template", ACCEPTED)
def test_accepted_and_renders_for_every_sample(template):
    check_builder_template(template)
    for context in sample_contexts():
        render_builder_text(template, **context)


@pytest.mark.parametrize("path", [variable.path for variable in PROMPT_VARIABLES])
def test_every_declared_path_is_accepted_in_both_spellings(path):
    root, *rest = path.split(".")
    bracketed = root + "".join(f"['{part}']" for part in rest)
    for template in (
        f"{{{{ {path} }}}}",
        f"{{{{ {bracketed} }}}}",
        f"{{% if {path} %}}{{{{ {path}|upper }}}}{{% endif %}}",
    ):
        check_builder_template(template)


def test_bracket_and_dot_spellings_render_the_same_value():
    context = sample_contexts()[1]
    assert render_builder_text("{{ contact['name'] }}", **context) == render_builder_text(
        "{{ contact.name }}", **context
    )
