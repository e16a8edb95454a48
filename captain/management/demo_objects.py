"""Idempotent seeding for the demo commands: create an object, or bring an existing one back to the demo's
values, always through the write services (the same rules as the admin and the API)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from captain.assistants.models import Assistant
from captain.assistants.selectors import assistant_list, scenario_list
from captain.assistants.services.assistants import assistant_create, assistant_update
from captain.assistants.services.scenarios import scenario_create, scenario_update
from helpdesk.models import Account


def demo_assistant(account: Account, *, name: str, **fields: Any) -> Assistant:
    """The account's assistant called `name`, created or updated to `fields`."""
    assistant = assistant_list(account_id=account.id).filter(name=name).first()
    if assistant is None:
        return assistant_create(account_id=account.id, name=name, **fields)
    return assistant_update(assistant=assistant, **fields)


def demo_scenarios(assistant: Assistant, specs: Iterable[Mapping[str, Any]]) -> None:
    """Each spec (with its `key`) created, or the scenario with that key updated to it."""
    existing = {scenario.key: scenario for scenario in scenario_list(assistant=assistant)}
    for spec in specs:
        key, fields = spec["key"], {k: v for k, v in spec.items() if k != "key"}
        if key in existing:
            scenario_update(scenario=existing[key], **fields)
        else:
            scenario_create(assistant=assistant, key=key, **fields)
