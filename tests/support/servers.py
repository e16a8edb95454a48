"""Real servers for tests, started on free loopback ports and stopped by the PID we started."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import redis

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, *, timeout: float, interval: float = 0.05, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout} s waiting for {what}")


def stop_process(proc: subprocess.Popen, *, sig: int = signal.SIGTERM, timeout: float = 15) -> None:
    """Stop a process we started, by its PID (never by name), escalating to SIGKILL."""
    if proc.poll() is not None:
        return
    try:
        os.kill(proc.pid, sig)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)
    except ProcessLookupError:
        pass


@dataclass
class RedisServer:
    port: int
    proc: subprocess.Popen
    workdir: str

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        stop_process(self.proc)
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_redis(port: int | None = None) -> RedisServer:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed; the test command (scripts/test) installs it")
    port = port or free_port()
    workdir = tempfile.mkdtemp(prefix="redis-test-")
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            workdir,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port, socket_connect_timeout=0.2)

    def ready() -> bool:
        try:
            return bool(client.ping())
        except redis.exceptions.ConnectionError:
            return False

    wait_for(ready, timeout=10, what="redis-server")
    return RedisServer(port=port, proc=proc, workdir=workdir)


@dataclass
class CeleryWorker:
    proc: subprocess.Popen
    log_path: Path
    env: dict[str, str] = field(default_factory=dict)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self, sig: int = signal.SIGTERM) -> None:
        stop_process(self.proc, sig=sig)


def start_celery_worker(
    *,
    env: dict[str, str],
    log_path: Path,
    concurrency: int = 1,
    pool: str = "prefork",
    queues: str = "helpdesk,captain,captain_background",
) -> CeleryWorker:
    full_env = {**os.environ, **env}
    log = log_path.open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--loglevel",
            "INFO",
            "--pool",
            pool,
            "--concurrency",
            str(concurrency),
            "-Q",
            queues,
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        cwd=ROOT,
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    worker = CeleryWorker(proc=proc, log_path=log_path, env=env)
    wait_for(lambda: "ready." in worker.log() or proc.poll() is not None, timeout=60, what="celery worker")
    if proc.poll() is not None:
        raise RuntimeError(f"celery worker exited early:\n{worker.log()}")
    return worker


@dataclass
class WebServer:
    """The real web server (gunicorn with uvicorn workers on config.asgi), as `scripts/run` starts it."""

    port: int
    proc: subprocess.Popen
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def worker_pids(self) -> list[int]:
        """The worker processes (children of the gunicorn master), which hold the streams."""
        try:
            children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        except FileNotFoundError:
            return []
        return [int(pid) for pid in children]

    def stop(self) -> None:
        stop_process(self.proc)


def supervisor() -> ModuleType:
    """scripts/supervisor.py (a script, not a package module), loaded once: the tests start the web server with
    the command line it builds, so they test the flags a user's server runs with."""
    module = sys.modules.get("supervisor")
    if module is None or not hasattr(module, "web_server_argv"):
        spec = importlib.util.spec_from_file_location("supervisor", ROOT / "scripts" / "supervisor.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["supervisor"] = module
        spec.loader.exec_module(module)
    return module


def start_web_server(*, env: dict[str, str], log_path: Path, workers: int = 1) -> WebServer:
    """Start the ASGI server (the command `scripts/run` starts) on a free loopback port against `env`
    (DATABASE_URL from tests.support.database.database_url_for_subprocess, REDIS_URL) and wait until it answers."""
    import urllib.error
    import urllib.request

    port = free_port()
    log = log_path.open("w")
    proc = subprocess.Popen(
        supervisor().web_server_argv(port, workers=workers, graceful_timeout=2, access_log=False),
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    server = WebServer(port=port, proc=proc, log_path=log_path)

    def answers() -> bool:
        if proc.poll() is not None:
            return True
        try:
            urllib.request.urlopen(f"{server.url}/auth/login/", timeout=1).close()
            return True
        except urllib.error.HTTPError:
            return True  # it answered
        except OSError:
            return False

    wait_for(answers, timeout=60, interval=0.2, what="the web server")
    if proc.poll() is not None:
        raise RuntimeError(f"web server exited early:\n{server.log()}")
    return server


def collect_static(var_dir: Path) -> dict[str, str]:
    """Collect the static files into `var_dir` (as `scripts/run` does) and return the environment that points a
    web server at them: with DEBUG off WhiteNoise serves STATIC_ROOT only, and the pages need their scripts."""
    env = {"HELPDESK_VAR_DIR": str(var_dir)}
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
    )
    return env


def start_test_web_server(*, redis_url: str, tmp_path: Path) -> WebServer:
    """The real web server for a test: on the test database (call from a test with database access) and
    `redis_url`, with the static files collected, as a browser needs them."""
    from tests.support.database import database_url_for_subprocess

    env = {"DATABASE_URL": database_url_for_subprocess(), "REDIS_URL": redis_url}
    env.update(collect_static(tmp_path / "var"))
    return start_web_server(env=env, log_path=tmp_path / "web.log")
