"""A per-process cache of what a reply run builds from an assistant's configuration (its scenarios, its team of
agents, whether it routes with a graph, its memory variables, the account's secrets), so a worker does not read
and rebuild the same rows for every customer message.

Never stale: every entry is stored under the configuration's version, a random token in Redis that changes
whenever any configuration row is saved or deleted (the signals below, in every process: `captain.tasks`
imports this module through the reply task). A run reads the token once (`config_version_pinned`), so the next
run after an admin's save reads the rows again. The token changes twice: at the save, and again when its
transaction commits, because a run that read the first token before the commit would have stored the old rows
under it. Changes that bypass signals (queryset `update`, `bulk_create`) are not covered, so nothing written that
way is cached: the routing graph and its learned examples are read every run as before.

Without Redis, nothing is cached. An entry also expires after `MAX_AGE_SECONDS`, a bound on staleness should a
token change be lost (Redis unreachable at the moment of a save)."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from django.core.signals import setting_changed
from django.db import transaction
from django.db.models.signals import post_delete, post_save

from captain.answering.services.locks import _client

logger = logging.getLogger(__name__)

T = TypeVar("T")

VERSION_KEY = "captain:config-version"
MAX_ENTRIES = 512
MAX_AGE_SECONDS = 300.0

_entries: OrderedDict[Hashable, tuple[str, float, Any]] = OrderedDict()
_lock = threading.Lock()
_pinned: ContextVar[str | None] = ContextVar("captain_config_version", default=None)


def _read_version() -> str:
    """The current token ("" when Redis cannot be read: then nothing is cached)."""
    try:
        client = _client()
        token = client.get(VERSION_KEY)
        if token is None:
            # First reader after Redis lost the key (or ever): a fresh token, never one an entry may hold.
            client.set(VERSION_KEY, uuid.uuid4().hex, nx=True)
            token = client.get(VERSION_KEY)
    except Exception:
        logger.warning("configuration version unreadable; the configuration is read from the database")
        return ""
    return token.decode() if isinstance(token, bytes) else str(token or "")


def config_changed() -> None:
    """A configuration row changed: every process reads the configuration again from its next run."""
    clear()  # this process at once, whatever Redis does
    try:
        _client().set(VERSION_KEY, uuid.uuid4().hex)
    except Exception:
        logger.warning(
            "configuration version not changed (Redis unreachable); cached entries expire in %ss",
            MAX_AGE_SECONDS,
        )


def _changed(**_: object) -> None:
    config_changed()
    transaction.on_commit(config_changed, robust=True)


@contextmanager
def config_version_pinned() -> Iterator[None]:
    """One reading of the version for everything cached during a run."""
    token = _pinned.set(_read_version())
    try:
        yield
    finally:
        _pinned.reset(token)


def cached(key: Hashable, build: Callable[[], T]) -> T:
    """`build()`'s value for `key` under the current configuration version; built again when the version moved,
    the entry is older than MAX_AGE_SECONDS, or there is no version (Redis away). `build` must return a value
    no caller mutates: it is shared by every run (and thread) of this process."""
    version = _pinned.get()
    if version is None:
        version = _read_version()
    if not version:
        return build()
    now = time.monotonic()
    with _lock:
        entry = _entries.get(key)
        if entry is not None and entry[0] == version and now - entry[1] < MAX_AGE_SECONDS:
            _entries.move_to_end(key)
            return entry[2]
    value = build()
    with _lock:
        _entries[key] = (version, now, value)
        _entries.move_to_end(key)
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)
    return value


def clear() -> None:
    with _lock:
        _entries.clear()


def _connect() -> None:
    from captain.actions.models import CustomTool
    from captain.assistants.models import Assistant, ModelEndpoint, Scenario
    from captain.memory.models import MemoryVariable
    from captain.routing.models import RoutingConfig

    models = (
        Assistant,
        Scenario,
        ModelEndpoint,
        CustomTool,
        MemoryVariable,
        # Only whether a routing configuration exists is cached: the graph (nodes, edges, rules, learned
        # examples) is read every run, as some of it is written without signals.
        RoutingConfig,
    )
    for model in models:
        uid = f"captain.config_cache.{model.__name__}"
        post_save.connect(_changed, sender=model, weak=False, dispatch_uid=f"{uid}.save")
        post_delete.connect(_changed, sender=model, weak=False, dispatch_uid=f"{uid}.delete")
    # Operator settings (endpoints, the default model) shape the team too; tests change them per test.
    setting_changed.connect(lambda **_: clear(), weak=False, dispatch_uid="captain.config_cache.settings")


_connect()
