"""A throwaway PostgreSQL cluster on a free loopback port, for the concurrency tests.

    python -m tests.support.postgres start DIR   # prints DATABASE_URL, then PID on the next line
    python -m tests.support.postgres stop DIR    # stops the server by the PID it recorded

PostgreSQL refuses to run as root; as root we run it as the `postgres` system user that Debian's package creates.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.servers import free_port


def _bin(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not candidates:
        raise RuntimeError(f"{name} not found: install PostgreSQL (scripts/setup --dev does)")
    return candidates[-1]


def _as_db_user(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def start(directory: Path) -> tuple[str, int]:
    directory.mkdir(parents=True, exist_ok=True)
    data = directory / "data"
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres")
    if not (data / "PG_VERSION").exists():
        subprocess.run(
            _as_db_user([_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8"]),
            check=True,
            stdout=subprocess.DEVNULL,
        )
    port = free_port()
    log = open(directory / "postgres.log", "w")  # noqa: SIM115 (the server outlives this function)
    proc = subprocess.Popen(
        _as_db_user(
            [
                _bin("postgres"),
                "-D",
                str(data),
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
        ),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    import psycopg

    deadline = time.monotonic() + 30
    while True:
        try:
            psycopg.connect(
                f"host=127.0.0.1 port={port} user=postgres dbname=postgres", connect_timeout=1
            ).close()
            break
        except psycopg.OperationalError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError((directory / "postgres.log").read_text()) from None
            time.sleep(0.2)
    (directory / "server.pid").write_text(str(proc.pid))
    return f"postgres://postgres@127.0.0.1:{port}/helpdesk", proc.pid


def stop(directory: Path) -> None:
    pid_file = directory / "server.pid"
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text())
    try:
        os.kill(pid, signal.SIGINT)  # runuser forwards it to the postmaster: a "fast" shutdown
        for _ in range(100):
            os.kill(pid, 0)
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    pid_file.unlink(missing_ok=True)


if __name__ == "__main__":
    action, target = sys.argv[1], Path(sys.argv[2])
    if action == "start":
        url, pid = start(target)
        print(url)
        print(pid)
    else:
        stop(target)
