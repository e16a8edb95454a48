"""Play each shop task through the real run path, once per mode, against the fake shop.

Every customer turn arrives through `message_ingest` (what a channel webhook calls) and is answered in this
process (Celery's eager mode) by `run_for_message`: the conversation lock on a private Redis, routing (a
model-free rule hands every message to the shop scenario, so routing is not what is measured), the scenario's
agent with the account's custom tools, the confirmation flow, the model over HTTP, `outcome_apply`. The
database is a throw-away test database (`bench.knowledge.harness.isolated_database`), so the product's data is
never touched.

Modes (one assistant each, all three sharing the account's custom tools):
    tools           the plain tool loop, native tool calls (Scenario.mode "tools")
    planning        planning mode, native tool calls
    planning-text   planning mode, the model listed as a text-tool model (the text protocol)
and `planning-nocompress`, planning mode with context compression off, replayed on the long-output tasks only.

The shop is reset before each task and told the current customer turn before each message, so its change log
says at which turn each change happened. Thoughts are read from the conversation's live channel on the private
Redis (`captain:live:conversation:<id>`), as the playground would see them.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

from .dataset import Task
from .scoring import TaskRun, TurnRecord
from .shop import Shop

MODES = ("tools", "planning", "planning-text")
NOCOMPRESS_MODE = "planning-nocompress"
SCENARIO_KEY = "shop_desk"
SCENARIO_MODE = {
    "tools": "tools",
    "planning": "planning",
    "planning-text": "planning",
    NOCOMPRESS_MODE: "planning",
}

INSTRUCTION = (
    "You handle orders of the Pinewood Home online shop: order status, stock, shipping address changes, refunds "
    "and cancellations. Use the shop tools to look things up and to make changes; never guess an order's status, "
    "stock or amount. Only say a change was made when the tool's result says it succeeded; when the shop refuses "
    "(for example an order that has already shipped), tell the customer plainly that it could not be done and "
    "why. Answer in the customer's language."
)


def tool_specs(shop_url: str) -> list[dict[str, Any]]:
    """The account's custom tools, pointing at the shop. GET tools change nothing; the three changes need the
    customer's confirmation (the product's rule for methods other than GET unless marked safe)."""
    order_id = {"type": "string", "description": "The order number, e.g. 1004"}
    return [
        {
            "name": "get_order",
            "description": "Look up one order by its number: status, items, amount paid, refunds, shipping "
            "address, tracking number.",
            "parameters": {"type": "object", "properties": {"order_id": order_id}, "required": ["order_id"]},
            "method": "GET",
            "url_template": f"{shop_url}/orders/{{{{ order_id }}}}",
        },
        {
            "name": "find_orders",
            "description": "List every order of a customer by their e-mail address (can be long).",
            "parameters": {
                "type": "object",
                "properties": {"email": {"type": "string", "description": "The customer's e-mail address"}},
                "required": ["email"],
            },
            "method": "GET",
            "url_template": f"{shop_url}/orders?email={{{{ email }}}}",
        },
        {
            "name": "check_stock",
            "description": "How many of a product (by SKU, e.g. LAMP-OAK) are in stock.",
            "parameters": {
                "type": "object",
                "properties": {"sku": {"type": "string", "description": "The product's SKU"}},
                "required": ["sku"],
            },
            "method": "GET",
            "url_template": f"{shop_url}/stock/{{{{ sku }}}}",
        },
        {
            "name": "change_address",
            "description": "Change the shipping address of an order that has not shipped yet.",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": order_id,
                    "address": {"type": "string", "description": "The complete new shipping address"},
                },
                "required": ["order_id", "address"],
            },
            "method": "PUT",
            "url_template": f"{shop_url}/orders/{{{{ order_id }}}}/address",
            "confirmation_template": "Change the shipping address of order {{ order_id }} to {{ address }}?",
        },
        {
            "name": "refund_order",
            "description": "Refund money for a paid order (at most what was paid, once per order).",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": order_id,
                    "amount": {"type": "number", "description": "Amount to refund in EUR"},
                    "reason": {"type": "string", "description": "Why, in a few words"},
                },
                "required": ["order_id", "amount", "reason"],
            },
            "method": "POST",
            "url_template": f"{shop_url}/orders/{{{{ order_id }}}}/refund",
            "confirmation_template": "Refund {{ amount }} EUR for order {{ order_id }}?",
        },
        {
            "name": "cancel_order",
            "description": "Cancel an order that has not shipped yet.",
            "parameters": {"type": "object", "properties": {"order_id": order_id}, "required": ["order_id"]},
            "method": "POST",
            "url_template": f"{shop_url}/orders/{{{{ order_id }}}}/cancel",
            "confirmation_template": "Cancel order {{ order_id }}?",
        },
    ]


def bench_account() -> int:
    """The account every benchmark assistant lives in, with credit for the whole run."""
    from captain.answering.models import CreditBalance
    from helpdesk.models import Account

    account = Account.objects.create(name="actions bench")
    CreditBalance.objects.create(account=account, limit=10_000_000)
    return account.id


def create_tools(account_id: int, shop: Shop) -> list[str]:
    """The shop tools as the account's `CustomTool` rows, through the product's own save (its checks on the
    templates and the URL run), the shop's token as their encrypted bearer secret."""
    from captain.actions.models import CustomTool
    from captain.actions.services.custom_tools import custom_tool_save
    from helpdesk.models import Account

    account = Account.objects.get(pk=account_id)
    names = []
    for spec in tool_specs(shop.url):
        custom_tool_save(
            account=account,
            fields={**spec, "auth_type": CustomTool.Auth.BEARER, "timeout_seconds": 10.0},
            secret=shop.token,
        )
        names.append(spec["name"])
    return names


def create_assistant(mode: str, account_id: int, tool_names: list[str]) -> int:
    """An API inbox, its assistant and the shop scenario in `mode`, with a rule that hands every customer message
    from triage to the scenario (no model decides the route). Returns the inbox id."""
    from captain.assistants.models import Assistant, AssistantInbox, KnowledgeMode, Scenario
    from captain.routing.services.routing import GraphSpec, routing_replace
    from helpdesk.models import Inbox

    inbox = Inbox.objects.create(
        account_id=account_id, name=f"shop {mode}", channel_type=Inbox.ChannelType.API, secret="bench"
    )
    assistant = Assistant.objects.create(
        account_id=account_id,
        name="Pinewood Home assistant",
        product_name="Pinewood Home",
        description="Online shop for home goods: mugs, lamps, kettles, tea sets, furniture.",
        knowledge_mode=KnowledgeMode.OFF,
        temperature=0.0,
    )
    AssistantInbox.objects.create(assistant=assistant, inbox=inbox)
    Scenario.objects.create(
        assistant=assistant,
        key=SCENARIO_KEY,
        title="Order desk",
        description="Anything about an order: status, stock, address changes, refunds, cancellations.",
        instruction=INSTRUCTION,
        tools=tool_names,
        mode=SCENARIO_MODE[mode],
    )
    routing_replace(
        assistant=assistant,
        spec=GraphSpec(
            config={"default_mode": "tool", "star": False},
            edges=[("assistant", SCENARIO_KEY)],
            rules=[{"node": "assistant", "match": "regex", "value": "(?s).*", "target": SCENARIO_KEY}],
        ),
    )
    return inbox.id


@contextlib.contextmanager
def bench_settings(model: str) -> Iterator[None]:
    """Settings of the benchmark only: the outbound policy lets the tools reach the shop on 127.0.0.1 over plain
    http (never in product settings), spans are stored (tool calls are counted from them), and the model is
    not a text-tool model unless a mode says so."""
    from django.conf import settings
    from django.test.utils import override_settings

    helpdesk = {**getattr(settings, "HELPDESK", {}), "OUTBOUND_ALLOWED_HOSTS": ["127.0.0.1"]}
    captain = {**settings.CAPTAIN, "STORE_SPANS": True, "TEXT_TOOL_MODELS": []}
    with override_settings(HELPDESK=helpdesk, CAPTAIN=captain):
        yield


@contextlib.contextmanager
def mode_settings(mode: str, model: str) -> Iterator[None]:
    """planning-text lists the model as a text-tool model; planning-nocompress turns compression off."""
    from django.conf import settings
    from django.test.utils import override_settings

    captain = dict(settings.CAPTAIN)
    if mode == "planning-text":
        captain["TEXT_TOOL_MODELS"] = [model]
    if mode == NOCOMPRESS_MODE:
        captain["ARTIFACT_THRESHOLD_CHARS"] = 0
    with override_settings(CAPTAIN=captain):
        yield


class LiveListener:
    """Listens to every conversation's live channel on the private Redis and keeps, per conversation, when each
    thought arrived (wall clock, as a viewer would see it)."""

    def __init__(self, redis_url: str) -> None:
        import redis

        self._client = redis.Redis.from_url(redis_url)
        self._pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        self._pubsub.psubscribe("captain:live:conversation:*")
        self._lock = threading.Lock()
        self._thoughts: dict[int, list[float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="bench-live", daemon=True)

    def start(self) -> LiveListener:
        self._thread.start()
        return self

    def _listen(self) -> None:
        while not self._stop.is_set():
            message = self._pubsub.get_message(timeout=0.2)
            if not message or message.get("type") != "pmessage":
                continue
            received = time.time()
            channel = (
                message["channel"].decode() if isinstance(message["channel"], bytes) else message["channel"]
            )
            try:
                conversation_id = int(channel.rsplit(":", 1)[1])
                payload = json.loads(message["data"])
            except (ValueError, IndexError, TypeError):
                continue
            if isinstance(payload, dict) and payload.get("type") == "thought":
                with self._lock:
                    self._thoughts.setdefault(conversation_id, []).append(received)

    def thoughts_since(self, conversation_id: int, since: float) -> list[float]:
        with self._lock:
            return [t for t in self._thoughts.get(conversation_id, []) if t >= since]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._pubsub.close()
        self._client.close()


def tool_calls_of(trace_id: str) -> dict[str, int]:
    """Tool calls of one run by tool name, from its stored `captain.tool` spans."""
    from captain.answering.models import SpanRecord
    from captain.runtime import semconv as sc

    counts: dict[str, int] = {}
    if not trace_id:
        return counts
    for attributes in SpanRecord.objects.filter(trace_id=trace_id, name=sc.SPAN_TOOL).values_list(
        "attributes", flat=True
    ):
        name = str((attributes or {}).get(sc.GEN_AI_TOOL_NAME, "?"))
        counts[name] = counts.get(name, 0) + 1
    return counts


def play(
    task: Task, *, mode: str, inbox_id: int, shop: Shop, live: LiveListener | None, serial: int
) -> TaskRun:
    """The customer's turns one after the other, each through ingest and answered before the next arrives."""
    from captain.actions.models import ToolConfirmation
    from captain.answering.models import Run, RunArtifact
    from helpdesk.channels.base import InboundContact, InboundMessage
    from helpdesk.models import Conversation, Inbox, Message
    from helpdesk.services.messages import message_ingest

    shop.reset()
    inbox = Inbox.objects.get(pk=inbox_id)
    source_id = f"{mode}-{task.id}-{serial}"
    contact = InboundContact(source_id=source_id, name="Bench customer")
    played = TaskRun(task=task, mode=mode)
    conversation_id: int | None = None
    last_run_id = 0
    for index, text in enumerate(task.turns):
        shop.set_turn(index)
        requests_before = len(shop.requests)
        wall, started = time.time(), time.monotonic()
        result = message_ingest(
            inbox=inbox,
            inbound=InboundMessage(provider_message_id=f"{source_id}-{index}", contact=contact, text=text),
        )
        seconds = time.monotonic() - started
        conversation_id = result.message.conversation_id
        runs = list(Run.objects.filter(conversation_id=conversation_id, id__gt=last_run_id).order_by("id"))
        turn = TurnRecord(text=text, outcome="none", reply="", seconds=seconds)
        for run in runs:
            last_run_id = run.id
            turn.outcome = run.outcome
            turn.detail = run.detail
            turn.artifacts += RunArtifact.objects.filter(run=run).count()
            turn.input_tokens += run.input_tokens
            turn.output_tokens += run.output_tokens
            turn.llm_calls += run.llm_calls
            for name, n in tool_calls_of(run.trace_id).items():
                turn.tool_calls[name] = turn.tool_calls.get(name, 0) + n
            if run.reply_message_id:
                turn.reply = (
                    Message.objects.filter(pk=run.reply_message_id).values_list("content", flat=True).first()
                    or ""
                )
        turn.shop_requests = len(shop.requests) - requests_before
        if live is not None:
            time.sleep(0.05)  # the listener thread may still be reading the last messages of the run
            thoughts = live.thoughts_since(conversation_id, wall)
            turn.thoughts = len(thoughts)
            turn.first_thought_seconds = round(min(thoughts) - wall, 3) if thoughts else None
        played.turns.append(turn)
        handed = Conversation.objects.filter(pk=conversation_id).exclude(status=Conversation.Status.PENDING)
        if handed.update(status=Conversation.Status.PENDING):
            played.handoffs += 1
    played.changes = [asdict(c) for c in shop.changes]
    if conversation_id is not None:
        played.confirmations = [
            {"tool": tool, "status": status}
            for tool, status in ToolConfirmation.objects.filter(conversation_id=conversation_id)
            .order_by("id")
            .values_list("tool_name", "status")
        ]
    return played
