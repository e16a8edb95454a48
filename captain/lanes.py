"""Two lanes of AI work: what a customer is waiting for, and everything else.

A customer's reply must never queue behind a team's background AI work (FAQ drafts of twelve new documents,
routing example drafts, auto-resolve judgements, copilot drafts, evaluation runs): that once made a customer wait
195 s instead of 25 s. So every captain task belongs to a lane:

- **customer**: the reply run (with its confirmations, shortcuts and the remember step, which run inside it) and
  the sweep that re-queues replies whose publish failed. Queue `captain` (the name queued messages already carry),
  consumed with `helpdesk` (deliveries) by the customer worker.
- **background**: everything else. Queue `captain_background`, consumed by a worker of its own with bounded
  concurrency (and, on one machine, a lower CPU priority: `scripts/run`).

Queues separate the *workers*; the model is still one. The lane of the task a thread is running is kept in a
context variable (set by Celery's task signals), and every model call passes through the endpoint's gate
(`captain.model_gate`), which makes a background call wait while any customer call waits for that endpoint and
keeps slots for customers. Code that runs outside a task (the web process, a management command) is in the
customer lane: a person is waiting for it.

`CAPTAIN["LANES"] = False` puts every captain task back on the one `captain` queue and opens the gate (the
behaviour before lanes; the lanes benchmark measures both in one run).
"""

from __future__ import annotations

import contextvars
import logging
import threading
from typing import Any, Literal

from captain.conf import captain_setting

Lane = Literal["customer", "background"]
CUSTOMER: Lane = "customer"
BACKGROUND: Lane = "background"

CUSTOMER_QUEUE = "captain"
BACKGROUND_QUEUE = "captain_background"
DELIVERY_QUEUE = "helpdesk"

CUSTOMER_TASKS = frozenset(
    {
        "captain.tasks.reply_generate",
        "captain.tasks.pending_messages_sweep",
        # The start-up prompt warm-up is for the first customers' replies. On the background lane it waited behind
        # the work already queued there (the demo seed's routing-example drafts: ~20 s on the bundled model), so
        # the demo's first question, asked when `scripts/run` said ready, read its whole prompt (docs/first-run.md).
        "captain.tasks.prompt_prefixes_warm",
    }
)
"""Tasks a customer is waiting on. Every other `captain.*` task is background work."""

logger = logging.getLogger(__name__)

_current: contextvars.ContextVar[Lane] = contextvars.ContextVar("captain_lane", default=CUSTOMER)


def enabled() -> bool:
    return bool(captain_setting("LANES"))


def lane_of_task(name: str) -> Lane:
    return CUSTOMER if name in CUSTOMER_TASKS or not name.startswith("captain.") else BACKGROUND


def queue_of_task(name: str) -> str:
    """The queue `name` is published to (Celery's `task_routes` callable)."""
    if not name.startswith("captain."):
        return DELIVERY_QUEUE
    if not enabled() or lane_of_task(name) == CUSTOMER:
        return CUSTOMER_QUEUE
    return BACKGROUND_QUEUE


def route_task(
    name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **kw: Any
) -> dict[str, str]:
    """Celery router (`CELERY_TASK_ROUTES`): each task to its lane's queue."""
    return {"queue": queue_of_task(name)}


def current() -> Lane:
    """The lane of the work this thread is doing (customer outside any task)."""
    return _current.get()


def enter(lane: Lane) -> contextvars.Token[Lane]:
    return _current.set(lane)


def leave(token: contextvars.Token[Lane]) -> None:
    _current.reset(token)


def worker_queues(lane: Lane | Literal["all"]) -> str:
    """The `-Q` list of a worker serving `lane` ("all": one worker for everything, as tests start)."""
    if lane == CUSTOMER:
        return f"{DELIVERY_QUEUE},{CUSTOMER_QUEUE}"
    if lane == BACKGROUND:
        return BACKGROUND_QUEUE
    return f"{DELIVERY_QUEUE},{CUSTOMER_QUEUE},{BACKGROUND_QUEUE}"


# Tokens of the lanes entered by running tasks, by task id: Celery's pre- and post-run signals of one task are
# sent from the thread that runs it, so the reset happens in the context that was set.
_entered: dict[str, contextvars.Token[Lane]] = {}


def _task_started(task_id: str | None = None, task: Any = None, **kwargs: Any) -> None:
    if task_id is not None and task is not None:
        _entered[task_id] = enter(lane_of_task(str(task.name)))


def _task_finished(task_id: str | None = None, **kwargs: Any) -> None:
    token = _entered.pop(task_id, None) if task_id is not None else None
    if token is not None:
        leave(token)


def _worker_ready(**kwargs: Any) -> None:
    """A worker that just started loads the Chinese segmenter's dictionary in the background (the grounding check
    reads Chinese words; ~0.7 s once per process), and queues the prompt warm-up (customer lane: its calls go
    before background calls at the model gate): the model server then has the assistants' fixed prompts cached
    before the first customer writes (`scripts/run` waits for it before it says ready)."""
    from captain.runtime.knowledge import chinese

    threading.Thread(target=chinese.warm, name="segmenter-warm-up", daemon=True).start()
    if int(captain_setting("PROMPT_WARM_ASSISTANTS")) <= 0 or not _runs_warm_up(kwargs.get("sender")):
        return
    from captain.queue import task

    try:
        task("captain.tasks.prompt_prefixes_warm").delay()
    except Exception:
        # Only an optimisation: a broker that refuses it now must not stop the worker from starting.
        logger.warning("could not queue the prompt warm-up", exc_info=True)


def _runs_warm_up(consumer: Any) -> bool:
    """Whether this worker consumes the queue the warm-up goes to: with two workers (customer and background
    lanes) only the customer one queues it. A worker whose queues cannot be read queues it too (a second warm-up is
    cheap: its prompts are cached by then)."""
    try:
        consumed = set(consumer.app.amqp.queues.consume_from or ())
    except AttributeError:
        return True
    if not consumed:
        return True
    return queue_of_task("captain.tasks.prompt_prefixes_warm") in consumed


def connect_signals() -> None:
    """Keep the running task's lane in the context, and warm prompts when a worker starts (called once per
    process by `CaptainConfig.ready`)."""
    from celery import signals

    signals.task_prerun.connect(_task_started, weak=False, dispatch_uid="captain.lanes.started")
    signals.task_postrun.connect(_task_finished, weak=False, dispatch_uid="captain.lanes.finished")
    signals.worker_ready.connect(_worker_ready, weak=False, dispatch_uid="captain.lanes.worker_ready")
