"""The real web server (gunicorn + uvicorn worker on config.asgi) on the test database and redis-server."""

from __future__ import annotations

import pytest

from tests.support.database import database_url_for_subprocess
from tests.support.servers import start_web_server


@pytest.fixture(scope="module")
def web(django_db_setup, django_db_blocker, redis_server, tmp_path_factory):
    with django_db_blocker.unblock():
        database_url = database_url_for_subprocess()
    server = start_web_server(
        env={"DATABASE_URL": database_url, "REDIS_URL": redis_server.url},
        log_path=tmp_path_factory.mktemp("web") / "web.log",
    )
    yield server
    server.stop()
