"""What the benchmark entry points (`python -m bench.routing`, `bench.knowledge`, `bench.memory`, `bench.actions`)
share: Django set up the way manage.py sets it up, output written line by line as a management command wrote it,
one-line errors, and the model endpoint (the one given, or the bundled model started and stopped here).

Each `bench/<name>/__main__.py` calls `setup_django()` before it imports `bench/<name>/cli.py`, so every model
import of the harnesses comes after `django.setup()`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parents[1]
"""The repository (settings.BASE_DIR)."""


class BenchError(Exception):
    """A wrong option, a missing set or file: printed as one line on stderr, exit status 1, no traceback."""


def setup_django() -> None:
    """What manage.py does before it runs a command: the project's settings unless DJANGO_SETTINGS_MODULE names
    others, then `django.setup()` (once: under pytest-django it has already run)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.apps import apps

    if not apps.ready:
        django.setup()


def write(message: str, stream: TextIO | None = None) -> None:
    """One line, as a management command's `self.stdout.write` wrote it (a newline unless it ends with one)."""
    (stream or sys.stdout).write(message if message.endswith("\n") else message + "\n")


def run_main(
    parser: argparse.ArgumentParser,
    handle: Callable[[dict[str, Any]], None],
    argv: Sequence[str] | None,
) -> int:
    """Parse the options into the dict a management command's `handle(**opts)` received and run it."""
    opts = vars(parser.parse_args(argv))
    try:
        handle(opts)
    except BenchError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1
    return 0


class BenchModel:
    """The model endpoint: the one given (`--base-url`, `--model`), or the bundled model started here and
    stopped at the end (`--threads`). Not needed (`needed=False`): a placeholder endpoint nothing calls."""

    def __init__(self, opts: dict[str, Any], needed: bool) -> None:
        self.opts = opts
        self.needed = needed
        self.handle: Any = None

    def __enter__(self) -> tuple[str, str]:
        if self.opts["base_url"] or not self.needed:
            if self.needed and not self.opts["model"]:
                raise BenchError("--model is required with --base-url")
            return self.opts["base_url"] or "http://127.0.0.1:9/v1", self.opts["model"] or "none"
        from captain.local_llm import start_local_llm

        extra: dict[str, Any] = {"n_threads": self.opts["threads"]} if self.opts.get("threads") else {}
        if self.opts.get("local_model"):
            extra["model"] = self.opts["local_model"]
        self.handle = start_local_llm(port=0, n_parallel=1, **extra)
        return self.handle.base_url, self.opts["model"] or self.handle.model

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            self.handle.stop()
