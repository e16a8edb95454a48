"""Shortcuts (captain.actions.services.shortcuts): recognising a command in every channel's form, filling parameters,
the fixed replies, safe templates, the tool block, and the save-time checks."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from captain.actions.models import Shortcut
from captain.actions.services.shortcuts import (
    render_template,
    shortcut_command_text,
    shortcut_create,
    shortcut_delete,
    shortcut_invocation,
    shortcut_result,
    shortcut_update,
    split_command,
    template_errors,
    validate_shortcut,
)
from captain.runtime import RunContext
from helpdesk.models import Message
from tests.factories import AssistantFactory, ConversationFactory, ScenarioFactory

pytestmark = pytest.mark.django_db

ORDER = {"name": "order_id", "description": "Your order number", "required": True}
NOTE = {"name": "note", "description": "Anything to add", "required": False}


@pytest.fixture
def assistant():
    return AssistantFactory()


@pytest.fixture
def track(assistant) -> Shortcut:
    return shortcut_create(
        assistant=assistant,
        command="track",
        description="Track an order",
        parameters=[ORDER, NOTE],
        action="message",
        message_template="Your order {order_id} is on its way. {note}",
    )


def context_for(assistant, conversation_id=None) -> RunContext:
    account_id = assistant.account_id
    return RunContext(
        account_id=account_id, conversation_id=conversation_id, extra={"assistant_id": assistant.id}
    )


# ---- recognising a command -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "/track 12345",
        "  /track 12345  ",
        "/track@MyShopBot 12345",  # Telegram groups: the command names the bot it is for
        "/TRACK 12345",
        "／track 12345",  # full-width slash (Chinese keyboards)
        "／ｔｒａｃｋ　12345",  # full-width letters and an ideographic space
        "/track order_id=12345",
        "/track order_id＝12345",
        '/track "12345"',
        "/track order_id='12345'",
        "/track 「12345」",
        "<@U0LAN0Z89> /track 12345",  # a Slack channel message starts with the bot's mention
    ],
)
def test_every_channel_form_of_the_command_gives_the_same_values(assistant, track, text):
    invocation = shortcut_invocation(assistant, text)
    assert invocation is not None
    assert invocation.shortcut == track
    assert invocation.values == {"order_id": "12345"}
    assert invocation.complete


def test_the_telegram_bot_name_is_kept_apart_from_the_values(assistant, track):
    invocation = shortcut_invocation(assistant, "/track@MyShopBot 12345")
    assert invocation is not None and invocation.bot == "myshopbot"


@pytest.mark.parametrize(
    "text",
    [
        "track 12345",
        "where is /track 12345",
        "/tracking 12345",
        "/track/12345",
        "/ track 12345",
        "/",
        "",
        "https://example.com/track",
    ],
)
def test_text_that_is_not_a_known_command_is_an_ordinary_message(assistant, track, text):
    assert shortcut_invocation(assistant, text) is None


def test_a_disabled_or_other_assistants_shortcut_is_not_recognised(assistant, track):
    shortcut_update(shortcut=track, enabled=False)
    assert shortcut_invocation(assistant, "/track 1") is None
    shortcut_update(shortcut=track, enabled=True)
    assert shortcut_invocation(AssistantFactory(account=assistant.account), "/track 1") is None


def test_positional_values_fill_parameters_in_order_and_the_last_takes_the_rest(assistant, track):
    invocation = shortcut_invocation(assistant, "/track 12345 please ring   twice, thanks")
    assert invocation is not None
    assert invocation.values == {"order_id": "12345", "note": "please ring   twice, thanks"}


def test_named_values_may_come_in_any_order_and_leave_the_rest_positional(assistant, track):
    invocation = shortcut_invocation(assistant, '/track note="leave at the door" 777')
    assert invocation is not None
    assert invocation.values == {"order_id": "777", "note": "leave at the door"}


def test_an_undeclared_key_is_plain_text(assistant, track):
    invocation = shortcut_invocation(assistant, "/track 12 colour=red")
    assert invocation is not None
    assert invocation.values == {"order_id": "12", "note": "colour=red"}


def test_a_quoted_value_keeps_its_spaces(assistant, track):
    invocation = shortcut_invocation(assistant, '/track "AB 12" x')
    assert invocation is not None and invocation.values == {"order_id": "AB 12", "note": "x"}


def test_split_command_leaves_the_rest_untouched():
    assert split_command("/track@Bot  a  b") == ("track", "bot", " a  b")
    assert split_command("hello /track") is None


# ---- missing parameters --------------------------------------------------------------------------------------


def test_a_missing_required_parameter_answers_with_the_form_and_no_model(assistant, track):
    invocation = shortcut_invocation(assistant, "/track")
    assert invocation is not None
    assert invocation.missing == ("order_id",)
    result = shortcut_result(invocation, context=context_for(assistant))
    assert result.reply_text == "/track needs: order_id (Your order number)"
    assert result.prompt_block is None
    assert result.record["status"] == "incomplete"


def test_an_empty_named_value_counts_as_missing(assistant, track):
    invocation = shortcut_invocation(assistant, "/track order_id= note=hi")
    assert invocation is not None and invocation.missing == ("order_id",)


def test_a_value_over_the_limit_is_refused_with_a_clear_reply(assistant, track):
    invocation = shortcut_invocation(assistant, "/track " + "9" * 501)
    assert invocation is not None and invocation.too_long == ("order_id",)
    result = shortcut_result(invocation, context=context_for(assistant))
    assert result.reply_text == "/track: order_id is too long (at most 500 characters)."


# ---- the message action and template safety ----------------------------------------------------------------------


def test_a_message_shortcut_replies_with_the_filled_template(assistant, track):
    invocation = shortcut_invocation(assistant, "/track 12345 ring twice")
    result = shortcut_result(invocation, context=context_for(assistant))
    assert result.reply_text == "Your order 12345 is on its way. ring twice"
    assert result.prompt_block is None


@pytest.mark.parametrize(
    "value",
    [
        "{order_id.__class__}",
        "{0}",
        "{note}",
        "{order_id!r:>99999}",
        "{{order_id}}",
        "%(order_id)s",
        "{{ config }}",
    ],
)
def test_customer_values_are_data_never_template(assistant, track, value):
    invocation = shortcut_invocation(assistant, f'/track "{value}" secret')
    assert invocation is not None
    result = shortcut_result(invocation, context=context_for(assistant))
    assert result.reply_text == f"Your order {value} is on its way. secret"


def test_render_template_reads_only_simple_names():
    values = {"a": "1"}
    assert render_template("{a} {{a}} {a.__class__} {0} {a:>5}", values) == "1 {a} {a.__class__} {0} {a:>5}"


@pytest.mark.parametrize(
    "template",
    ["{order_id.__class__}", "{0}", "{}", "{order_id:>10}", "{order_id!r}", "{unknown}", "a { b", "a } b"],
)
def test_templates_may_reference_only_declared_parameters(template):
    assert template_errors(template, {"order_id"})


def test_literal_braces_and_declared_names_are_valid():
    assert template_errors("{{json}} {order_id}", {"order_id"}) == []


def test_a_message_template_with_a_format_trick_is_refused_at_save(assistant):
    with pytest.raises(ValidationError) as exc:
        shortcut_create(
            assistant=assistant,
            command="hello",
            description="Say hello",
            parameters=[ORDER],
            action="message",
            message_template="Hi {order_id.__class__.__init__.__globals__}",
        )
    assert "message_template" in exc.value.message_dict
    assert not Shortcut.objects.exists()


# ---- the tool action ----------------------------------------------------------------------------------------


def test_a_tool_shortcut_puts_the_tool_result_into_a_prompt_block(assistant):
    ScenarioFactory(assistant=assistant, tools=["add_private_note"])
    conversation = ConversationFactory(account=assistant.account)
    shortcut_create(
        assistant=assistant,
        command="callback",
        description="Ask for a call back",
        parameters=[{"name": "phone", "description": "Your phone number", "required": True}],
        action="tool",
        tool_name="add_private_note",
        tool_arguments={"note": "Customer asks for a call back at {phone}"},
    )
    invocation = shortcut_invocation(assistant, "/callback +49 30 1234")
    result = shortcut_result(invocation, context=context_for(assistant, conversation.id))
    assert result.reply_text is None
    assert result.prompt_block == (
        'The customer used the shortcut /callback with phone="+49 30 1234". Result of add_private_note:\n'
        "Note added for the support team.\nAnswer the customer's request with this result."
    )
    note = Message.objects.get(conversation=conversation, private=True)
    assert note.content == "Customer asks for a call back at +49 30 1234"
    assert result.record == {
        "command": "callback",
        "action": "tool",
        "values": {"phone": "+49 30 1234"},
        "tool": "add_private_note",
        "status": "ok",
    }


def test_a_tool_shortcut_whose_arguments_fail_the_schema_says_the_lookup_failed(assistant):
    shortcut_create(
        assistant=assistant,
        command="faq",
        description="Search the help center",
        parameters=[{"name": "q", "description": "What to search", "required": True}],
        action="tool",
        tool_name="faq_lookup",
        tool_arguments={"query": "{q} or {q}"},
    )
    invocation = shortcut_invocation(assistant, "/faq " + "x" * 300)  # twice over the tool's 500 characters
    result = shortcut_result(invocation, context=context_for(assistant))
    assert result.reply_text is None
    assert "failed, so there is no result" in result.prompt_block
    assert "do not invent a result" in result.prompt_block
    assert result.record["status"] == "failed" and "invalid arguments" in result.record["error"]


def test_a_tool_the_team_lost_since_saving_fails_honestly(assistant):
    scenario = ScenarioFactory(assistant=assistant, tools=["set_priority"])
    shortcut_create(
        assistant=assistant,
        command="urgent",
        description="Mark it urgent",
        action="tool",
        tool_name="set_priority",
        tool_arguments={"priority": "urgent"},
    )
    scenario.tools = []
    scenario.save()
    result = shortcut_result(shortcut_invocation(assistant, "/urgent"), context=context_for(assistant))
    assert "failed" in result.prompt_block
    assert "not available" in result.record["error"]


# ---- save-time checks -----------------------------------------------------------------------------------------


def test_a_tool_outside_the_teams_tools_is_refused(assistant):
    with pytest.raises(ValidationError) as exc:
        shortcut_create(
            assistant=assistant,
            command="urgent",
            description="Mark it urgent",
            action="tool",
            tool_name="set_priority",
            tool_arguments={"priority": "urgent"},
        )
    assert "tool_name" in exc.value.message_dict


@pytest.mark.parametrize("tool_name", ["handoff_to_human", "resolve_conversation", "no_such_tool", ""])
def test_ending_and_unknown_tools_are_refused(assistant, tool_name):
    ScenarioFactory(assistant=assistant, tools=["resolve_conversation"])
    with pytest.raises(ValidationError) as exc:
        shortcut_create(
            assistant=assistant,
            command="done",
            description="Done",
            action="tool",
            tool_name=tool_name,
            tool_arguments={"reason": "done"},
        )
    assert "tool_name" in exc.value.message_dict


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ({}, "faq_lookup needs: query"),
        ({"query": "{q}", "colour": "red"}, "has no argument(s) colour"),
        ({"query": "{missing}"}, "not a declared parameter"),
        ({"query": 5}, "argument name -> template text"),
    ],
)
def test_tool_arguments_must_cover_the_tool_and_use_declared_parameters(assistant, arguments, needle):
    with pytest.raises(ValidationError) as exc:
        shortcut_create(
            assistant=assistant,
            command="faq",
            description="Search",
            parameters=[{"name": "q", "description": "", "required": True}],
            action="tool",
            tool_name="faq_lookup",
            tool_arguments=arguments,
        )
    assert any(needle in m for m in exc.value.message_dict["tool_arguments"])


def test_a_fixed_argument_is_checked_against_the_tools_schema(assistant):
    ScenarioFactory(assistant=assistant, tools=["set_priority"])
    with pytest.raises(ValidationError) as exc:
        shortcut_create(
            assistant=assistant,
            command="urgent",
            description="Mark it urgent",
            action="tool",
            tool_name="set_priority",
            tool_arguments={"priority": "whenever"},
        )
    assert "priority:" in exc.value.message_dict["tool_arguments"][0]


@pytest.mark.parametrize(
    "parameters",
    [
        "order_id",
        [{"name": "Order ID"}],
        [{"name": "a"}, {"name": "a"}],
        [{"name": "a", "required": "yes"}],
        [{"name": "a", "type": "int"}],
        [{"name": f"p{i}"} for i in range(11)],
    ],
)
def test_badly_shaped_parameters_are_refused(assistant, parameters):
    with pytest.raises(ValidationError) as exc:
        shortcut_create(
            assistant=assistant,
            command="x",
            description="x",
            parameters=parameters,
            action="message",
            message_template="hi",
        )
    assert "parameters" in exc.value.message_dict


@pytest.mark.parametrize("command", ["Track", "1track", "track-order", "t" * 33, ""])
def test_commands_follow_telegrams_rule(assistant, command):
    shortcut = Shortcut(
        assistant=assistant, command=command, description="d", action="message", message_template="m"
    )
    with pytest.raises(ValidationError) as exc:
        validate_shortcut(shortcut)
    assert "command" in exc.value.message_dict


def test_a_command_is_unique_per_assistant(assistant, track):
    with pytest.raises(ValidationError) as exc:
        shortcut_create(
            assistant=assistant, command="track", description="again", action="message", message_template="m"
        )
    assert exc.value.message_dict["command"] == ["This assistant already has the shortcut /track."]
    # ...and renaming onto it is refused too, leaving the row as it was.
    other = shortcut_create(
        assistant=assistant, command="help", description="Help", action="message", message_template="m"
    )
    with pytest.raises(ValidationError):
        shortcut_update(shortcut=other, command="track")
    assert Shortcut.objects.get(pk=other.pk).command == "help"


def test_a_description_is_required_for_the_command_menu(assistant):
    with pytest.raises(ValidationError) as exc:
        shortcut_create(
            assistant=assistant, command="x", description="  ", action="message", message_template="m"
        )
    assert "description" in exc.value.message_dict


def test_delete_removes_the_shortcut(assistant, track):
    shortcut_delete(shortcut=track)
    assert shortcut_invocation(assistant, "/track 1") is None


# ---- the playground's command text -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        {"order_id": "12345"},
        {"order_id": "12345", "note": "ring twice"},
        {"order_id": "AB 12", "note": 'say "hi"'},
        {"note": "only a note"},
        {"order_id": "a=b", "note": "c"},
    ],
)
def test_the_playground_text_parses_back_to_the_same_values(assistant, track, values):
    text = shortcut_command_text(track, values)
    assert text.startswith("/track")
    invocation = shortcut_invocation(assistant, text)
    assert invocation is not None and invocation.values == values
