"""Planning mode, held confirmations and artifacts in the run loop, driven by a scripted in-process model."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.sdk.trace import TracerProvider

from captain.runtime import (
    Agent,
    ConfirmedCall,
    PlanningSettings,
    PlanState,
    PlanStep,
    Reply,
    RunContext,
    RunError,
    RunHooks,
    Runner,
    Tool,
    ToolFailed,
)
from captain.runtime.planning import UPDATE_REMINDER, customer_facing
from tests.captain.runtime.test_runner import ScriptedModel, calls, reply

ORDER_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string", "minLength": 1}},
    "required": ["order_id"],
    "additionalProperties": False,
}
REFUND_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "amount": {"type": "number", "minimum": 0}},
    "required": ["order_id", "amount"],
    "additionalProperties": False,
}


class Shop:
    """Tool functions over an in-memory shop that remembers every change."""

    def __init__(self, *, orders_text: str = "") -> None:
        self.changes: list[dict[str, Any]] = []
        self.lookups: list[str] = []
        self.orders_text = orders_text

    def get_order(self, ctx: RunContext, args: dict[str, Any]) -> str:
        self.lookups.append(args["order_id"])
        if args["order_id"] == "404":
            raise ToolFailed("the service answered HTTP 404 (no such order)")
        return json.dumps({"order_id": args["order_id"], "status": "delivered", "paid": 20})

    def refund(self, ctx: RunContext, args: dict[str, Any]) -> str:
        self.changes.append(args)
        return json.dumps({"refunded": args["amount"]})

    def list_orders(self, ctx: RunContext, args: dict[str, Any]) -> str:
        return self.orders_text

    def summarize(self, ctx: RunContext, args: dict[str, Any]) -> str:
        return f"got {len(args['text'])} characters"

    def tools(self) -> list[Tool]:
        return [
            Tool("get_order", "Look up an order.", ORDER_SCHEMA, self.get_order),
            Tool(
                "refund_order",
                "Refund an order.",
                REFUND_SCHEMA,
                self.refund,
                confirm=lambda a: f"Refund {a['amount']} EUR for order {a['order_id']}? Reply yes or no.",
            ),
            Tool(
                "list_orders",
                "List the customer's orders.",
                {"type": "object", "properties": {}, "additionalProperties": False},
                self.list_orders,
            ),
            Tool(
                "count_text",
                "Count a text.",
                {
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                    "additionalProperties": False,
                },
                self.summarize,
            ),
        ]


DEFAULT_PLANNING = PlanningSettings()


def _agent(shop: Shop, *, planning: PlanningSettings | None = DEFAULT_PLANNING) -> Agent:
    return Agent(
        key="orders",
        name="Orders",
        instructions="You handle orders.",
        model="m",
        tools=shop.tools(),
        planning=planning,
    )


class Thoughts(RunHooks):
    def __init__(self) -> None:
        self.pieces: list[str] = []

    def on_thought(self, context: RunContext, agent: Agent, delta: str) -> None:
        self.pieces.append(delta)


def _run(
    model: ScriptedModel, agent: Agent, context: RunContext, hooks: RunHooks | None = None, **kwargs: Any
):
    # A private tracer provider: the global one stores spans in the database, which these tests do not use.
    runner = Runner(model, hooks=hooks, tracer_provider=TracerProvider(), **kwargs)
    return runner.run(
        agents={agent.key: agent},
        start_key=agent.key,
        messages=[{"role": "user", "content": "refund order 1042 please"}],
        context=context,
    )


def test_planning_agent_plans_acts_and_ends_with_the_customer_answer() -> None:
    shop = Shop()
    hooks = Thoughts()
    model = ScriptedModel(
        calls(("update_plan", {"steps": ["Look up order 1042", "Tell the status"], "next": "look up"})),
        calls(("get_order", {"order_id": "1042"})),
        calls(("update_plan", {"done": [1], "next": "tell the status"})),
        calls(("think", {"thought": "Delivered, paid 20."})),
        calls(("final_answer", {"answer": "Your order 1042 was delivered."})),
    )
    context = RunContext(account_id=1, conversation_id=1)
    result = _run(model, _agent(shop), context, hooks)

    assert result.outcome == Reply("Your order 1042 was delivered.")
    assert result.plan is not None and result.plan.status == "done"
    assert [s.done for s in result.plan.steps] == [True, False]
    # The planning tools are offered next to the agent's own, and the prompt carries the current plan.
    assert {"update_plan", "think", "ask_customer", "final_answer", "get_order"} <= set(model.offered(0))
    # The plan changes every step: it travels in the turn's context (a second system message), after the fixed
    # instructions, so the instructions and the tool schemas stay a cacheable prefix.
    messages = model.calls[3]["messages"]
    assert "1. [x] Look up order 1042" not in messages[0]["content"]
    assert messages[1]["role"] == "system" and "1. [x] Look up order 1042" in messages[1]["content"]
    assert messages[0]["content"] == model.calls[0]["messages"][0]["content"]
    # After a real tool call, the model is reminded to update the plan.
    tool_results = [m for m in model.calls[2]["messages"] if m["role"] == "tool"]
    assert tool_results[-1]["content"].endswith(UPDATE_REMINDER)
    assert hooks.pieces == ["Delivered, paid 20."]
    assert [e.type for e in result.events].count("plan") == 3  # two updates and the end of the run


def test_a_change_is_held_for_confirmation_and_nothing_runs() -> None:
    shop = Shop()
    model = ScriptedModel(calls(("refund_order", {"order_id": "1042", "amount": 20})))
    context = RunContext(account_id=1, conversation_id=1)
    result = _run(model, _agent(shop, planning=None), context)

    assert shop.changes == []
    assert isinstance(result.outcome, Reply)
    assert result.outcome.text == "Refund 20 EUR for order 1042? Reply yes or no."
    assert result.outcome.billable is False
    assert result.outcome.confirmation is not None
    assert result.outcome.confirmation.arguments == {"order_id": "1042", "amount": 20}
    assert [e.data.get("status") for e in result.events if e.type == "confirmation"] == ["asked"]


def test_a_confirmed_call_runs_as_stored_before_the_model_is_asked() -> None:
    shop = Shop()
    model = ScriptedModel(reply("Done: 20 EUR are on their way back."))
    context = RunContext(
        account_id=1,
        conversation_id=1,
        answered=ConfirmedCall("refund_order", {"order_id": "1042", "amount": 20}, confirmed=True),
    )
    result = _run(model, _agent(shop, planning=None), context)

    assert shop.changes == [{"order_id": "1042", "amount": 20}]
    assert result.outcome == Reply("Done: 20 EUR are on their way back.")
    sent = model.calls[0]["messages"]
    assert sent[-2]["tool_calls"][0]["function"]["name"] == "refund_order"
    assert sent[-1] == {"role": "tool", "tool_call_id": "confirmed_call_1", "content": '{"refunded": 20}'}
    assert context.answered is None  # settled once


def test_a_declined_call_does_not_run_and_the_model_is_told() -> None:
    shop = Shop()
    model = ScriptedModel(reply("Alright, nothing was refunded."))
    context = RunContext(
        account_id=1,
        conversation_id=1,
        answered=ConfirmedCall(
            "refund_order", {"order_id": "1042", "amount": 20}, confirmed=False, note="declined"
        ),
    )
    result = _run(model, _agent(shop, planning=None), context)
    assert shop.changes == []
    assert model.calls[0]["messages"][-1]["content"] == "declined"
    assert result.outcome == Reply("Alright, nothing was refunded.")


def test_plan_resumes_after_the_confirmation() -> None:
    """The plan paused for the confirmation continues: the same steps, now with the refund done."""
    shop = Shop()
    plan = PlanState(
        agent_key="orders",
        steps=[PlanStep("Look up order", True), PlanStep("Refund 20 EUR", False)],
        status="waiting",
        waiting_for="confirmation",
    )
    model = ScriptedModel(
        calls(("update_plan", {"done": [2], "next": "answer"})),
        calls(("final_answer", {"answer": "Refunded 20 EUR for order 1042."})),
    )
    context = RunContext(
        account_id=1,
        conversation_id=1,
        plan=plan,
        answered=ConfirmedCall("refund_order", {"order_id": "1042", "amount": 20}, confirmed=True),
    )
    result = _run(model, _agent(shop), context)
    assert shop.changes == [{"order_id": "1042", "amount": 20}]
    assert result.plan is plan and plan.status == "done" and all(s.done for s in plan.steps)
    assert plan.history and plan.history[0]["status"] == "waiting"


def test_a_repeated_call_gets_one_last_call_for_the_answer() -> None:
    """A planning agent that keeps asking for a result it has is not asked to call tools again: one last call
    may only answer, and no answer ends the run as a loop."""
    shop = Shop()
    model = ScriptedModel(
        *[calls(("get_order", {"order_id": "1042"})) for _ in range(2)],
        reply("Thought: I have it.\nOrder 1042 was delivered."),
    )
    result = _run(model, _agent(shop), RunContext(account_id=1, conversation_id=1))
    assert result.outcome == Reply("Order 1042 was delivered.")
    assert len(shop.lookups) == 1  # the repeat was answered from the first result, never sent again
    assert model.calls[2]["tools"] == []  # the last call offers no tool at all

    shop = Shop()
    model = ScriptedModel(
        *[calls(("get_order", {"order_id": "1042"})) for _ in range(2)],
        reply('{"name": "get_order", "arguments": {"order_id": "1042"}}'),
    )
    result = _run(model, _agent(shop), RunContext(account_id=1, conversation_id=1))
    assert isinstance(result.outcome, RunError) and result.outcome.error == "loop_detected"


def test_no_progress_on_the_plan_stops_the_run() -> None:
    shop = Shop()
    model = ScriptedModel(
        calls(("update_plan", {"steps": ["Find the order"], "next": "find"})),
        *[calls(("get_order", {"order_id": str(n)})) for n in range(1, 8)],
    )
    result = _run(model, _agent(shop, planning=PlanningSettings(no_progress_limit=3)), RunContext(1, 1))
    assert isinstance(result.outcome, RunError) and result.outcome.error == "loop_detected"
    assert "no step of the plan" in result.outcome.detail
    assert len(shop.lookups) == 3


def test_the_tool_budget_ends_with_a_forced_final_answer() -> None:
    shop = Shop()
    model = ScriptedModel(
        calls(("get_order", {"order_id": "1"})),
        calls(("get_order", {"order_id": "2"})),
        reply('{"name": "final_answer", "arguments": {"answer": "Order 1 and 2 were delivered."}}'),
    )
    agent = _agent(shop, planning=PlanningSettings(max_tool_calls=2, no_progress_limit=10))
    result = _run(model, agent, RunContext(1, 1))
    assert result.outcome == Reply("Order 1 and 2 were delivered.")
    assert model.calls[2]["tools"] == []
    assert len(shop.lookups) == 2


def test_a_final_answer_that_reports_tool_use_is_sent_back() -> None:
    shop = Shop()
    model = ScriptedModel(
        calls(("final_answer", {"answer": "I called get_order and the tool said delivered."})),
        calls(("final_answer", {"answer": "Your order was delivered."})),
    )
    result = _run(model, _agent(shop), RunContext(1, 1))
    assert result.outcome == Reply("Your order was delivered.")
    assert not customer_facing("I called get_order and it worked")


def test_ask_customer_pauses_the_plan() -> None:
    shop = Shop()
    model = ScriptedModel(
        calls(("update_plan", {"steps": ["Get the order number", "Refund"], "next": "ask"})),
        calls(("ask_customer", {"question": "What is your order number?"})),
    )
    result = _run(model, _agent(shop), RunContext(1, 1))
    assert result.outcome == Reply("What is your order number?")
    assert result.plan is not None
    assert result.plan.status == "waiting" and result.plan.waiting_for == "What is your order number?"


def test_a_long_output_becomes_an_artifact_and_its_reference_gives_the_full_text() -> None:
    orders = [{"order_id": str(1000 + n), "item": f"item {n}", "status": "shipped"} for n in range(200)]
    shop = Shop(orders_text=json.dumps(orders))
    model = ScriptedModel(
        calls(("list_orders", {})),
        calls(("search_artifact", {"ref": "A1", "query": "1150"})),
        calls(("count_text", {"text": "A1"})),
        reply("Order 1150 (item 150) has shipped."),
    )
    context = RunContext(1, 1)
    result = _run(model, _agent(shop, planning=None), context, artifact_threshold=1000)

    assert [a.ref for a in result.artifacts] == ["A1"]
    assert result.artifacts[0].content == shop.orders_text
    in_context = [m for m in model.calls[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "artifact A1" in in_context and len(in_context) < 1000
    assert "search_artifact" in model.offered(1)
    found = [m for m in model.calls[2]["messages"] if m["role"] == "tool"][-1]["content"]
    assert '"order_id": "1150"' in found and '"order_id": "1151"' not in found
    counted = [m for m in model.calls[3]["messages"] if m["role"] == "tool"][-1]["content"]
    assert counted == f"got {len(shop.orders_text)} characters"
    assert [e.data["ref"] for e in result.events if e.type == "artifact"] == ["A1"]


def test_compression_off_keeps_the_output_in_the_context() -> None:
    shop = Shop(orders_text="x" * 5000)
    model = ScriptedModel(calls(("list_orders", {})), reply("ok"))
    result = _run(model, _agent(shop, planning=None), RunContext(1, 1), artifact_threshold=None)
    assert result.artifacts == []
    assert [m for m in model.calls[1]["messages"] if m["role"] == "tool"][-1]["content"] == "x" * 5000


def test_a_tool_failure_reaches_the_model_as_a_clear_error() -> None:
    shop = Shop()
    model = ScriptedModel(calls(("get_order", {"order_id": "404"})), reply("That order does not exist."))
    result = _run(model, _agent(shop, planning=None), RunContext(1, 1))
    error = [m for m in model.calls[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert error == "error: get_order failed: the service answered HTTP 404 (no such order)"
    assert result.outcome == Reply("That order does not exist.")


# ---- the text tool protocol in the loop ----------------------------------------------------------------------


def _text_agent(shop: Shop, *, planning: PlanningSettings | None = None) -> Agent:
    agent = _agent(shop, planning=planning)
    agent.tool_protocol = "text"
    return agent


def test_text_protocol_runs_tools_from_tagged_text_and_streams_the_thought() -> None:
    shop = Shop()
    hooks = Thoughts()
    model = ScriptedModel(
        reply('Thought: I need the order first.\n<action name="get_order">{"order_id": "1042"}</action>'),
        reply("Thought: It was delivered.\n<final_answer>Your order 1042 was delivered.</final_answer>"),
    )
    result = _run(model, _text_agent(shop), RunContext(1, 1), hooks)

    assert result.outcome == Reply("Your order 1042 was delivered.")
    assert shop.lookups == ["1042"]
    assert model.calls[0]["tools"] == []  # described in the prompt, not sent as native tools
    system = model.calls[0]["messages"][0]["content"]
    assert "get_order" in system and "<action" in system
    # The model's own text goes back as it wrote it; the result comes as an observation in a user message.
    second = model.calls[1]["messages"]
    assert second[-2]["role"] == "assistant" and '<action name="get_order">' in second[-2]["content"]
    assert second[-1]["role"] == "user" and "delivered" in second[-1]["content"]
    assert "".join(hooks.pieces).strip() == "I need the order first.It was delivered."  # one piece per call
    assert [e.data["text"] for e in result.events if e.type == "thought"] == [
        "I need the order first.",
        "It was delivered.",
    ]


def test_text_protocol_arguments_are_validated_like_native_calls() -> None:
    shop = Shop()
    model = ScriptedModel(
        reply('Thought: look it up\n<action name="get_order">{"order": 1042}</action>'),
        reply("<final_answer>Which order number?</final_answer>"),
    )
    result = _run(model, _text_agent(shop), RunContext(1, 1))
    assert shop.lookups == []
    observation = model.calls[1]["messages"][-1]["content"]
    assert "invalid arguments for get_order" in observation
    assert result.outcome == Reply("Which order number?")


def test_text_protocol_parse_error_is_re_asked_once() -> None:
    shop = Shop()
    model = ScriptedModel(
        reply('Thought: look it up\n<action name="get_order">{"order_id": "1042"'),
        reply('Thought: again\n<action name="get_order">{"order_id": "1042"}</action>'),
        reply("<final_answer>Delivered.</final_answer>"),
    )
    result = _run(model, _text_agent(shop), RunContext(1, 1))
    assert result.outcome == Reply("Delivered.")
    assert shop.lookups == ["1042"]
    assert [e.type for e in result.events].count("protocol_error") == 1
    assert model.calls[1]["messages"][-1]["role"] == "user"  # the re-ask says what was wrong


def test_text_protocol_broken_twice_hands_over() -> None:
    shop = Shop()
    model = ScriptedModel(
        reply('<action name="get_order">{"order_id": '),
        reply('<action name="get_order">not json</action>'),
    )
    result = _run(model, _text_agent(shop), RunContext(1, 1))
    assert isinstance(result.outcome, RunError) and result.outcome.error == "model_error"
    assert shop.lookups == []


def test_text_protocol_unknown_tool_is_refused() -> None:
    shop = Shop()
    model = ScriptedModel(
        reply('Thought: x\n<action name="drop_database">{}</action>'),
        reply("<final_answer>I cannot do that.</final_answer>"),
    )
    result = _run(model, _text_agent(shop), RunContext(1, 1))
    assert "refused: unknown tool 'drop_database'" in model.calls[1]["messages"][-1]["content"]
    assert result.outcome == Reply("I cannot do that.")


def test_text_protocol_planning_agent_holds_a_change_for_confirmation() -> None:
    shop = Shop()
    model = ScriptedModel(
        reply('Thought: plan\n<action name="update_plan">{"steps": ["Refund"], "next": "refund"}</action>'),
        reply('Thought: refund\n<action name="refund_order">{"order_id": "1042", "amount": 20}</action>'),
    )
    result = _run(model, _text_agent(shop, planning=PlanningSettings()), RunContext(1, 1))
    assert shop.changes == []
    assert isinstance(result.outcome, Reply) and result.outcome.confirmation is not None
    assert result.plan is not None and result.plan.status == "waiting"


def test_text_next_to_native_calls_is_a_thought_not_a_reply() -> None:
    shop = Shop()
    hooks = Thoughts()
    first = calls(("get_order", {"order_id": "1042"}))
    first.content = "Let me look that order up."
    model = ScriptedModel(first, reply("It was delivered."))
    result = _run(model, _agent(shop, planning=None), RunContext(1, 1), hooks)
    assert hooks.pieces == ["Let me look that order up."]
    assert result.outcome == Reply("It was delivered.")


def test_a_planning_call_written_as_json_text_is_recovered() -> None:
    shop = Shop()
    model = ScriptedModel(
        reply(
            '```json\n{"name": "update_plan", "arguments": {"steps": ["Look up"], "next": "look up"}}\n```'
        ),
        calls(("final_answer", {"answer": "Done."})),
    )
    result = _run(model, _agent(shop), RunContext(1, 1))
    assert result.plan is not None and [s.text for s in result.plan.steps] == ["Look up"]
    assert result.outcome == Reply("Done.")


def test_a_planning_agent_answering_without_a_tool_is_reminded_once() -> None:
    shop = Shop()
    model = ScriptedModel(
        reply("I'm sorry, but I can't assist with that."),
        calls(("get_order", {"order_id": "1042"})),
        reply("Your order was delivered."),  # plain text again after the reminder: accepted
    )
    result = _run(model, _agent(shop), RunContext(1, 1))
    assert shop.lookups == ["1042"]
    assert model.calls[1]["messages"][-1]["content"].startswith("(Reply by calling a tool")
    assert [e.type for e in result.events].count("protocol_error") == 1
    assert result.outcome == Reply("Your order was delivered.")


def test_an_echoed_instruction_is_never_sent_to_the_customer() -> None:
    shop = Shop()
    model = ScriptedModel(
        reply("Sure."),
        reply(
            "(Reply by calling a tool: look up or change what you need with your tools, or call final_answer"
        ),
    )
    result = _run(model, _agent(shop), RunContext(1, 1))
    assert isinstance(result.outcome, RunError) and result.outcome.error == "malformed_reply"


def test_a_confirmed_call_asked_for_again_is_not_held_or_run_twice() -> None:
    shop = Shop()
    model = ScriptedModel(
        calls(("refund_order", {"order_id": "1042", "amount": 20})),  # the model asks for it once more
        reply("Refunded 20 EUR."),  # the last, tool-less call
    )
    context = RunContext(
        account_id=1,
        conversation_id=1,
        answered=ConfirmedCall("refund_order", {"order_id": "1042", "amount": 20}, confirmed=True),
    )
    result = _run(model, _agent(shop), context)
    assert shop.changes == [{"order_id": "1042", "amount": 20}]
    assert result.outcome == Reply("Refunded 20 EUR.")
    assert not [e for e in result.events if e.type == "confirmation" and e.data.get("status") == "asked"]


def test_a_reply_echoing_the_confirmation_note_is_not_sent() -> None:
    shop = Shop()
    note = "The customer declined; nothing was done. Do not do it unless they ask again."
    model = ScriptedModel(reply(note))
    context = RunContext(
        account_id=1,
        conversation_id=1,
        answered=ConfirmedCall(
            "refund_order", {"order_id": "1042", "amount": 20}, confirmed=False, note=note
        ),
    )
    result = _run(model, _agent(shop, planning=None), context)
    assert isinstance(result.outcome, RunError) and result.outcome.error == "malformed_reply"
