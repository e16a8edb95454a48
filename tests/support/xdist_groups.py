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
"""

from __future__ import annotations

import pytest

HEAVY = "heavy"
HEAVY_MARKERS = frozenset({"local_llm", "browser", "e2e"})
HEAVY_PATHS = ("tests/api_contract/",)
SHARED_FIXTURE_SCOPES = frozenset({"module", "class", "package"})


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


# tryfirst: xdist's own hook (registered after this plugin, so otherwise called before it) reads the marks to
# put "@group" into each node id.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # set on xdist's workers when --dist loadgroup
        return
    for item in items:
        markers = {mark.name for mark in item.iter_markers()}
        group = group_for(item.nodeid, markers, _uses_shared_fixture(item))
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
