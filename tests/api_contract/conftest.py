"""The demo server the API contract tests call: one per test module, so what one module's client writes (a fuzzer
writes thousands of rows) never changes what another module reads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.demo_api import DemoApi, seed_objects, start_demo_api


@pytest.fixture(scope="module")
def demo_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoApi]:
    api = start_demo_api(tmp_path_factory.mktemp("demo-api"))
    try:
        seed_objects(api)
        yield api
    finally:
        api.stop()
