"""What the live-update benchmarks share: a throwaway database, redis-server and the real web server
(gunicorn + uvicorn worker on config.asgi), with DEBUG off as in production (a bench-only key, plain HTTP on
loopback, as the test suite runs)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


@dataclass
class Stack:
    workdir: Path
    redis: Any
    web: Any

    def stop(self) -> None:
        self.web.stop()
        self.redis.stop()


def start_stack(*, web_workers: int, prefix: str) -> Stack:
    """Migrate a new SQLite database, collect static files, start redis-server and the web server, and set up
    Django in this process (the benchmark creates its rows with the ORM)."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ.update(
        {
            "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "HELPDESK_VAR_DIR": str(workdir),
            "LOG_LEVEL": "WARNING",
        }
    )
    sys.path.insert(0, str(ROOT))
    import tests.support.test_environment  # noqa: F401  (production settings with a bench-only key)
    from tests.support.servers import collect_static, start_redis, start_web_server

    redis_server = start_redis()
    os.environ["REDIS_URL"] = redis_server.url
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True)
    collect_static(workdir)

    import django

    django.setup()
    web = start_web_server(env={}, log_path=workdir / "web.log", workers=web_workers)
    return Stack(workdir=workdir, redis=redis_server, web=web)


def worker_bench_django(workdir: Path, *, database_url: str = "", store_spans: bool = False) -> Any:
    """The set-up of the benchmarks that run Celery workers against a scripted model: production settings with a
    bench-only key, a migrated database (SQLite in `workdir` unless `database_url`), a redis-server (returned: the
    caller stops it) and Django set up in this process. Spans are not stored unless `store_spans` (the
    benchmarks time runs, not traces), and the outbound policy lets the workers reach the model and the callback receiver on 127.0.0.1."""
    os.environ.update(
        {
            "DATABASE_URL": database_url or f"sqlite:///{workdir / 'bench.sqlite3'}",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "HELPDESK_VAR_DIR": str(workdir),
            "CAPTAIN_STORE_SPANS": "1" if store_spans else "0",
            "LOG_LEVEL": "WARNING",
            "HELPDESK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1",
        }
    )
    sys.path.insert(0, str(ROOT))
    import tests.support.test_environment  # noqa: F401  (production settings with a bench-only key)
    from tests.support.servers import start_redis

    redis_server = start_redis()
    os.environ["REDIS_URL"] = redis_server.url
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True)
    import django

    django.setup()
    return redis_server


def session_cookie(user: Any) -> str:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value
