"""A throwaway PostgreSQL cluster on a free loopback port, for the concurrency tests.

    python -m tests.support.postgres start DIR   # prints exactly one line: the DATABASE_URL
    python -m tests.support.postgres stop DIR    # fast shutdown of that server; a no-op if none is running

PostgreSQL refuses to run as root; as root we run it as the `postgres` system user that Debian's package creates.

How the server is run, and why:

* `start` uses `pg_ctl start -w`. pg_ctl daemonizes the postmaster (its own session, stdin from /dev/null,
  stdout/stderr to DIR/postgres.log) and returns once the server is ready, so nothing we start stays in the
  process tree between us and the postmaster. As root only the short-lived pg_ctl call goes through
  `runuser -u postgres`; runuser exits with pg_ctl and is never mistaken for the server. (Running
  `runuser -- postgres` directly leaves runuser as the server's parent, and runuser does not pass SIGINT on,
  which is how every `stop` used to leave the server running.)
* The server's PID is the postmaster's own: the first line of DATA/postmaster.pid, read after the server
  accepts connections. We also keep it in DIR/server.pid.
* `stop` sends SIGINT (PostgreSQL's "fast" shutdown, what `pg_ctl stop -m fast` sends) to that PID itself
  rather than calling pg_ctl: pg_ctl cannot run as root (another runuser), and it only watches postmaster.pid,
  whereas we check that the PID still is this data directory's postmaster (never a recycled PID), wait for the
  process itself to be gone, and SIGKILL it and its backends as a last resort. A zombie counts as gone: the
  postmaster is reparented to PID 1, which may reap it late.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.servers import free_port

_TOOLS = ("postgres", "initdb", "pg_ctl")
STOP_TIMEOUT = 10.0


def _bindir() -> Path:
    """The directory holding postgres, initdb and pg_ctl of one PostgreSQL version."""
    candidates: list[Path] = []
    on_path = shutil.which("postgres")
    if on_path:
        candidates.append(Path(os.path.realpath(on_path)).parent)

    def version(path: str) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", Path(path).parent.name))

    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True)]
    for directory in candidates:
        if all(os.access(directory / tool, os.X_OK) for tool in _TOOLS):
            return directory
    raise RuntimeError("PostgreSQL not found: install PostgreSQL (scripts/setup --dev does)")


def _bin(name: str) -> str:
    return str(_bindir() / name)


def _as_db_user(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def _run(cmd: list[str], directory: Path) -> subprocess.CompletedProcess[str]:
    # Output is captured, never inherited: our stdout is the caller's `$(...)`, which must get the URL only.
    return subprocess.run(
        _as_db_user(cmd),
        cwd=directory,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: fall back to signal 0
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _is_postmaster_of(pid: int, data: Path) -> bool:
    """Whether `pid` is a live postmaster serving `data` (so a recycled PID is never signalled)."""
    if not _running(pid):
        return False
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except FileNotFoundError:
        return False
    except OSError:
        return True  # no /proc to check with; the PID came from this data directory's own files
    return "-D" in args and any(os.path.realpath(a) == str(data) for a in args if a.startswith("/"))


def _children(pid: int) -> list[int]:
    found = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            fields = Path(stat).read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(Path(stat).parent.name))
    return found


def _postmaster_pid(data: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int((data / "postmaster.pid").read_text().splitlines()[0])
    return None


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def start(directory: Path) -> tuple[str, int]:
    """Start a server with its cluster in DIRECTORY/data; return its URL and the postmaster's PID."""
    directory = directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    data = directory / "data"
    log = directory / "postgres.log"
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres")
        if log.exists():
            shutil.chown(log, "postgres")
        writable = subprocess.run(
            ["runuser", "-u", "postgres", "--", "test", "-w", str(directory)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        if writable.returncode:
            raise RuntimeError(
                f"the postgres user cannot write to {directory} (is a parent directory private?)"
            )
    if _is_postmaster_of(_postmaster_pid(data) or 0, data):
        raise RuntimeError(f"a server is already running on {data}; stop it first")
    if not (data / "PG_VERSION").exists():
        init = _run(
            [_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8"], directory
        )
        if init.returncode:
            raise RuntimeError(f"initdb failed:\n{init.stdout}")
    port = free_port()
    options = shlex.join(
        [
            "-p",
            str(port),
            "-k",
            str(directory),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "fsync=off",
            "-c",
            "max_connections=200",
        ]
    )
    try:
        started = _run(
            [_bin("pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "-t", "60", "start"],
            directory,
        )
        if started.returncode:
            raise RuntimeError(f"pg_ctl start failed:\n{started.stdout}\n{_read(log)}")
        import psycopg

        deadline = time.monotonic() + 30
        while True:
            try:
                with psycopg.connect(
                    f"host=127.0.0.1 port={port} user=postgres dbname=postgres",
                    connect_timeout=1,
                    autocommit=True,
                ) as conn:
                    # So the printed URL itself accepts connections (Django's test runner makes its own test_ database).
                    if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'helpdesk'").fetchone():
                        conn.execute("CREATE DATABASE helpdesk")
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the server does not accept connections:\n{_read(log)}") from None
                time.sleep(0.2)
        pid = _postmaster_pid(data)
        if pid is None or not _is_postmaster_of(pid, data):
            raise RuntimeError(f"no running postmaster in {data / 'postmaster.pid'}:\n{_read(log)}")
    except BaseException:
        stop(directory)  # never leave a half-started server behind
        raise
    (directory / "server.pid").write_text(f"{pid}\n")
    return f"postgres://postgres@127.0.0.1:{port}/helpdesk", pid


def stop(directory: Path, timeout: float = STOP_TIMEOUT) -> None:
    """Fast shutdown of the server started in DIRECTORY; wait for it to exit, SIGKILL as a last resort.

    Idempotent: a directory whose server is already stopped (or was never started) is a no-op."""
    directory = directory.resolve()
    data = directory / "data"
    recorded = None
    with contextlib.suppress(OSError, ValueError):
        recorded = int((directory / "server.pid").read_text().strip())
    for pid in dict.fromkeys(p for p in (recorded, _postmaster_pid(data)) if p):
        if not _is_postmaster_of(pid, data):
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)  # "fast" shutdown: roll back open transactions, disconnect, exit
        if _wait_gone(pid, timeout):
            continue
        backends = _children(pid)
        for victim in (pid, *backends):
            with contextlib.suppress(ProcessLookupError):
                os.kill(victim, signal.SIGKILL)
        for victim in (pid, *backends):
            _wait_gone(victim, 5)
        print(f"postgres {pid} ignored a fast shutdown for {timeout:g} s; killed", file=sys.stderr)
    (directory / "server.pid").unlink(missing_ok=True)


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: python -m tests.support.postgres start|stop DIR", file=sys.stderr)
        return 2
    action, target = argv[0], Path(argv[1])
    if action == "start":
        url, _pid = start(target)
        # One line and nothing after it, in one write: callers take it with `$(...)`.
        sys.stdout.write(url + "\n")
        sys.stdout.flush()
    else:
        stop(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
