"""tests/support/postgres.py, the throwaway server scripts/test runs the PostgreSQL tests against.

`start` must print exactly one line (scripts/test takes it with `$(...)`; a second line once broke a
`| head -1` under `set -o pipefail`), and `stop` must really stop the postmaster (it used to signal a
`runuser` wrapper and leave the server running). Runs wherever the PostgreSQL binaries are installed."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from tests.support import postgres

ROOT = Path(__file__).resolve().parents[1]
URL = re.compile(r"postgres://postgres@127\.0\.0\.1:(\d+)/helpdesk")

try:
    postgres._bindir()
except RuntimeError:
    pytest.skip("the PostgreSQL binaries are not installed", allow_module_level=True)
if os.geteuid() == 0:
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip(
            "running as root, and there is no postgres user to run the server as", allow_module_level=True
        )


def _helper(action: str, directory: Path, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.support.postgres", action, str(directory)],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _alive(pid: int) -> bool:
    """The process exists and has not exited (an exited one may wait a moment as a zombie for PID 1)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _postmaster(directory: Path) -> int:
    return int((directory / "data" / "postmaster.pid").read_text().splitlines()[0])


def _assert_refused(port: int) -> None:
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass


def _assert_stopped(pid: int, backends: list[int], port: int) -> None:
    assert not _alive(pid), f"postmaster {pid} still running"
    assert not [b for b in backends if _alive(b)], "postgres backends left behind"
    _assert_refused(port)


@pytest.fixture
def pg_dir():
    # Not tmp_path: pytest's base directory is private to root, and the server runs as the postgres user.
    directory = Path(tempfile.mkdtemp(prefix="helpdesk-pg-test-"))
    yield directory
    postgres.stop(directory)
    shutil.rmtree(directory, ignore_errors=True)


def test_start_prints_only_the_url_and_stop_stops_the_postmaster(pg_dir):
    started = _helper("start", pg_dir)
    assert started.returncode == 0, started.stderr
    assert started.stdout.count("\n") == 1 and started.stdout.endswith("\n"), repr(started.stdout)
    url = started.stdout.strip()
    port = int(URL.fullmatch(url).group(1))
    with psycopg.connect(url, connect_timeout=5) as conn:
        assert conn.execute("SELECT current_database()").fetchone() == ("helpdesk",)

    pid = _postmaster(pg_dir)
    assert (pg_dir / "server.pid").read_text().strip() == str(pid)
    assert Path(f"/proc/{pid}/comm").read_text().strip() == "postgres"  # the server itself, not runuser
    backends = postgres._children(pid)
    assert backends  # checkpointer, walwriter, ...

    stopped = _helper("stop", pg_dir, timeout=30)
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout == ""
    _assert_stopped(pid, backends, port)
    assert "database system is shut down" in (pg_dir / "postgres.log").read_text()  # fast, not killed

    again = _helper("stop", pg_dir, timeout=30)
    assert again.returncode == 0 and again.stdout == "", again.stderr


def test_stop_on_a_directory_that_never_started_is_a_no_op(pg_dir):
    for directory in (pg_dir, pg_dir / "missing"):
        stopped = _helper("stop", directory, timeout=30)
        assert stopped.returncode == 0, stopped.stderr
    assert not (pg_dir / "missing").exists()


def test_start_piped_into_head_succeeds_under_pipefail(pg_dir):
    """The pattern that failed a fresh clone's CI run: `start | head -1`, unbuffered, under pipefail."""
    piped = subprocess.run(
        [
            "bash",
            "-o",
            "pipefail",
            "-c",
            '"$0" -m tests.support.postgres start "$1" | head -1',
            sys.executable,
            pg_dir,
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert piped.returncode == 0, piped.stderr
    port = int(URL.fullmatch(piped.stdout.strip()).group(1))
    pid = _postmaster(pg_dir)
    backends = postgres._children(pid)

    stopped = _helper("stop", pg_dir, timeout=30)
    assert stopped.returncode == 0, stopped.stderr
    _assert_stopped(pid, backends, port)


def test_the_scripts_test_block_leaves_no_server_behind(pg_dir):
    """scripts/test's own lines: the URL through `$(...)` under `set -euo pipefail`, `stop` from the EXIT trap."""
    script = """
set -euo pipefail
py="$0"; pgdir="$1"
trap '"$py" -m tests.support.postgres stop "$pgdir"' EXIT
pg_url="$("$py" -m tests.support.postgres start "$pgdir")"
echo "url=$pg_url"
echo "pid=$(head -1 "$pgdir/data/postmaster.pid")"
"""
    ran = subprocess.run(
        ["bash", "-c", script, sys.executable, pg_dir],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    lines = dict(line.split("=", 1) for line in ran.stdout.splitlines())
    port = int(URL.fullmatch(lines["url"]).group(1))
    pid = int(lines["pid"])
    assert not _alive(pid)
    _assert_refused(port)


def test_stop_kills_a_postmaster_that_ignores_fast_shutdown(pg_dir):
    url, pid = postgres.start(pg_dir)
    port = int(URL.fullmatch(url).group(1))
    backends = postgres._children(pid)
    os.kill(pid, signal.SIGSTOP)  # a stopped process does not act on SIGINT; SIGKILL still ends it
    try:
        postgres.stop(pg_dir, timeout=1)
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGCONT)
    _assert_stopped(pid, backends, port)
    postgres.stop(pg_dir, timeout=1)  # stale postmaster.pid of a killed server: still a no-op
