"""The bundled model's server stops when the process that started it dies, however it dies: a benchmark or a
supervisor killed without stopping its server left one serving (two cores, gigabytes of memory) with no owner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from captain.local_llm.server import watch_parent

PARENT = textwrap.dedent(
    """
    import sys, time
    from captain.local_llm import start_local_llm
    handle = start_local_llm(port=0)
    print(handle.pid, flush=True)
    time.sleep(600)
    """
)


def _gone(pid: int, *, within: float) -> bool:
    deadline = time.monotonic() + within
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def test_the_watch_stops_the_server_at_the_end_of_its_stdin_and_not_before():
    read_end, write_end = os.pipe()
    stop = threading.Event()
    with os.fdopen(read_end, "rb") as pipe:
        thread = watch_parent(pipe, stop)
        assert not stop.wait(0.3), "stopped while the parent still holds the pipe"
        os.close(write_end)
        assert stop.wait(5)
        thread.join(5)


@pytest.mark.local_llm
def test_a_server_whose_parent_is_killed_stops_by_itself():
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": "."},
    )
    server_pid = 0
    try:
        assert parent.stdout is not None
        server_pid = int(parent.stdout.readline())
        os.kill(server_pid, 0)  # serving
        parent.send_signal(signal.SIGKILL)  # no chance to stop its server
        parent.wait(10)
        assert _gone(server_pid, within=20), f"the server {server_pid} outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
        if server_pid and not _gone(server_pid, within=0):
            os.kill(server_pid, signal.SIGKILL)  # the PID we were given, never by name
