"""Which tests never run at the same time on two pytest-xdist workers, loaded as a pytest plugin (`-p` in
pyproject.toml's addopts). scripts/test runs the SQLite pass as `pytest -n 2 --dist loadgroup`: every test goes to
whichever worker is free, except that the tests of one xdist group all go to one worker, one after another.

Each worker is a whole test session of its own: its own redis-server and test database (tests/conftest.py,
pytest-django's per-worker database name), servers on free loopback ports, files under its own tmp_path. What two
workers would still share is the machine's two cores, so the groups are about load, not state:

* "heavy": a test that keeps more than one core busy by itself: the bundled local model (`local_llm`: a llama.cpp
  server of its own with 2 threads and about 1 GB of memory), the browser tests (`browser`: chromium's processes
  and the live server), the end-to-end tests (`e2e`: redis-server, Celery worker processes, the real web server)
  and the API contract tests (tests/api_contract: a 2-process web server and a 2-worker Schemathesis). One group
  for all four kinds, not one per kind: they add up to about 12 of the pass's 32 minutes, under half, so one
  worker runs them all while the other runs the rest, and the wall-clock budgets these tests assert (a reply
  within N seconds while workers are killed, a stream that ends in time) never share the machine with another
  test of that kind.
* one group per test module that has a module- or class-scoped fixture (a server started once per module, a
  model loaded once): its tests stay on one worker, so that fixture is set up once, not once per worker.

Everything else is spread test by test. Without `--dist loadgroup` (a serial run, `-n 0`) nothing is marked.

How the groups reach the scheduler: pytest-xdist 3.8's loadgroup appends "@group" to each test's node id on the
workers (`item._nodeid`), and the scheduler in the main process reads the group back from the ids. pytest 9.2 keeps
node ids in a structured form that ignores `_nodeid`, so the groups were silently lost and every test was spread
on its own (pytest-xdist issue #1386, open). So this plugin schedules loadgroup itself: each worker writes, once
its collection is done, the group of each test (its `xdist_group` marks, whoever added them) into a directory
that the main process made and named in an environment variable, and `pytest_xdist_make_scheduler` returns
xdist's own scope scheduler with the scope of a test read from there.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

HEAVY = "heavy"
HEAVY_MARKERS = frozenset({"local_llm", "browser", "e2e"})
HEAVY_PATHS = ("tests/api_contract/",)
SHARED_FIXTURE_SCOPES = frozenset({"module", "class", "package"})
GROUPS_DIR_VARIABLE = "TESTS_XDIST_GROUPS_DIR"  # set by the main process, inherited by its workers
_groups_dir = pytest.StashKey[str]()


def group_for(nodeid: str, markers: set[str], shared_fixture: bool) -> str | None:
    """The xdist group of a test: `nodeid` as pytest prints it, the names of its markers, and whether it uses
    a fixture shared by the tests of its module or class."""
    path = nodeid.split("::", 1)[0]
    if markers & HEAVY_MARKERS or path.startswith(HEAVY_PATHS):
        return HEAVY
    if shared_fixture:
        return path
    return None


def _uses_shared_fixture(item: pytest.Item) -> bool:
    """A module- or class-scoped fixture of this suite's own (a plugin's, such as pytest-django's class-scoped
    autouse one that every test has, sets up nothing worth keeping on one worker)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(
        definitions
        and definitions[-1].scope in SHARED_FIXTURE_SCOPES
        and definitions[-1].baseid.startswith("tests")  # "" for a plugin's fixture
        for definitions in info.name2fixturedefs.values()
    )


def _loadgroup(config: pytest.Config) -> bool:
    if hasattr(config, "workerinput"):
        return bool(getattr(config.option, "loadgroup", False))  # xdist sets it on its workers
    return config.getoption("dist", None) == "loadgroup"


def pytest_configure(config: pytest.Config) -> None:
    if _loadgroup(config) and not hasattr(config, "workerinput"):
        directory = tempfile.mkdtemp(prefix="helpdesk-xdist-groups-")
        config.stash[_groups_dir] = directory
        os.environ[GROUPS_DIR_VARIABLE] = directory  # before the workers start: they copy the environment


def pytest_unconfigure(config: pytest.Config) -> None:
    directory = config.stash.get(_groups_dir, None)
    if directory is not None:
        os.environ.pop(GROUPS_DIR_VARIABLE, None)
        shutil.rmtree(directory, ignore_errors=True)


# tryfirst: xdist's own hook (registered after this plugin) reads the marks too, for the pytest versions where
# its node id suffix still works.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _loadgroup(config):
        return
    for item in items:
        markers = {mark.name for mark in item.iter_markers()}
        group = group_for(item.nodeid, markers, _uses_shared_fixture(item))
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


# tryfirst: before xdist's own hook tells the main process that this worker's collection is done.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """On a worker: write the group of every grouped test, by the node id the worker reports it with."""
    config = session.config
    directory = os.environ.get(GROUPS_DIR_VARIABLE)
    if not (hasattr(config, "workerinput") and _loadgroup(config) and directory):
        return
    groups = {}
    for item in session.items:
        names = {
            str(m.args[0] if m.args else m.kwargs.get("name", "default"))
            for m in item.iter_markers("xdist_group")
        }
        if names:
            groups[item.nodeid] = "_".join(sorted(names))
    path = Path(directory) / f"{config.workerinput['workerid']}.json"
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(groups))
    partial.replace(path)  # whole or not at all


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """In the main process, for --dist loadgroup: xdist's scope scheduler, one scope per group and one per
    ungrouped test, the groups read from what the workers wrote. It is asked for scopes only once every worker has
    reported its collection, so the files are complete by then."""
    directory = config.stash.get(_groups_dir, None)
    if directory is None:
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        _groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._groups is None:
                self._groups = {}
                for written in sorted(Path(directory).glob("*.json")):
                    self._groups.update(json.loads(written.read_text()))
            if nodeid in self._groups:
                return self._groups[nodeid]
            if nodeid.rfind("@") > nodeid.rfind("]"):  # xdist's own suffix, where pytest still keeps it
                return nodeid.split("@")[-1]
            return nodeid

    return GroupScheduling(config, log)
