"""scripts/supervisor.py (what scripts/run runs): exits are shown with the end of the log, restarts back off, a
process that keeps crashing stops the run, and stopping reaches every process by its PID."""

from __future__ import annotations

import importlib.util
import io
import os
import re
import subprocess
import sys
import time

import pytest

from tests.support.servers import ROOT, wait_for

spec = importlib.util.spec_from_file_location("supervisor", ROOT / "scripts" / "supervisor.py")
supervisor = importlib.util.module_from_spec(spec)
sys.modules["supervisor"] = supervisor
spec.loader.exec_module(supervisor)


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def make(out: io.StringIO, **kwargs) -> supervisor.Supervisor:
    defaults = {"max_crashes": 3, "stable_seconds": 5.0, "backoff_seconds": 0.05, "stop_timeout": 5.0}
    return supervisor.Supervisor(out=out, **{**defaults, **kwargs})


def watch_until_failed(sup: supervisor.Supervisor, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            sup.check()
        except supervisor.RunFailed as exc:
            return str(exc)
        time.sleep(0.05)
    raise AssertionError("the run never stopped")


def test_a_process_that_keeps_crashing_stops_the_run_with_its_log(tmp_path):
    out = io.StringIO()
    sup = make(out)
    crash = "import sys; print('ModuleNotFoundError: No module named packaging'); sys.exit(1)"
    sup.start(supervisor.Program("worker", py(crash), tmp_path / "worker.log"))

    message = watch_until_failed(sup)

    assert "worker crashed 3 times in a row" in message
    assert "No module named packaging" in message  # the end of its log, in the terminal
    shown = out.getvalue()
    assert shown.count("!! worker (pid") == 2  # the two exits before the third, each reported
    assert "exit code 1" in shown and "restarting worker" in shown


def test_a_process_that_exits_once_is_restarted_and_reported(tmp_path):
    out = io.StringIO()
    sup = make(out)
    marker = tmp_path / "crashed-once"
    code = (
        "import pathlib, sys, time\n"
        f"m = pathlib.Path({str(marker)!r})\n"
        "if not m.exists():\n    m.touch(); print('lost the broker'); sys.exit(3)\n"
        "time.sleep(60)\n"
    )
    program = supervisor.Program("beat", py(code), tmp_path / "beat.log")
    sup.start(program)
    first_pid = program.proc.pid

    def restarted() -> bool:
        sup.check()
        return program.proc.pid != first_pid and program.proc.poll() is None

    wait_for(restarted, timeout=10, what="a restart")
    time.sleep(0.3)
    sup.check()

    shown = out.getvalue()
    assert f"!! beat (pid {first_pid}) exited: exit code 3" in shown
    assert "lost the broker" in shown
    assert f"beat restarted (pid {program.proc.pid})" in shown
    assert program.proc.poll() is None  # still running: no second exit
    sup.stop_all()


def test_a_process_that_dies_before_it_is_ready_fails_the_start_with_its_log(tmp_path):
    sup = make(io.StringIO())
    program = supervisor.Program(
        "model",
        py("import sys; print('sha256 mismatch'); sys.exit(2)"),
        tmp_path / "model.log",
        ready=lambda _: False,
    )

    with pytest.raises(supervisor.RunFailed) as failed:
        sup.start(program)

    assert "model exited (exit code 2) before it was ready" in str(failed.value)
    assert "sha256 mismatch" in str(failed.value)


def test_readiness_reads_only_what_the_current_process_wrote(tmp_path):
    log = tmp_path / "worker.log"
    log.write_text("celery@host ready.\n")  # left over from an earlier run
    program = supervisor.Program(
        "worker",
        py("import time; time.sleep(60)"),
        log,
        ready_timeout=0.6,
        ready=lambda p: " ready." in p.new_output(),
    )

    with pytest.raises(supervisor.RunFailed, match="not ready after"):
        make(io.StringIO()).start(program)
    program.proc.kill()
    program.proc.wait()


def test_stop_reaches_every_process_by_pid_and_kills_one_that_ignores_sigterm(tmp_path):
    out = io.StringIO()
    sup = make(out, stop_timeout=0.5)
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    first = supervisor.Program("redis", py("import time; time.sleep(60)"), tmp_path / "a.log")
    second = supervisor.Program(
        "web", py(stubborn), tmp_path / "b.log", ready=lambda p: "up" in p.new_output()
    )
    sup.start(first)
    sup.start(second)

    sup.stop_all()

    assert first.proc.returncode is not None and second.proc.returncode is not None
    for pid in (first.proc.pid, second.proc.pid):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    shown = out.getvalue()
    assert "web (pid" in shown and "ignored SIGTERM" in shown
    assert shown.index("web stopped") < shown.index("redis stopped")  # reverse order of start


def test_a_closed_terminal_does_not_keep_the_children_from_being_stopped(tmp_path):
    """`scripts/run | tee` after Ctrl-C: the reader is gone, yet every child must still be stopped."""
    out = io.StringIO()
    sup = make(out)
    program = supervisor.Program("web", py("import time; time.sleep(60)"), tmp_path / "web.log")
    sup.start(program)
    out.close()

    sup.say("stopping")
    sup.stop_all()

    assert program.proc.returncode is not None


def running(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_children_are_stopped_when_the_supervisor_itself_is_killed(tmp_path):
    """SIGKILL leaves no chance to stop anything by PID: the children get SIGTERM from the kernel instead."""
    code = (
        "import importlib.util, sys, time\n"
        f"spec = importlib.util.spec_from_file_location('supervisor', {str(ROOT / 'scripts' / 'supervisor.py')!r})\n"
        "s = importlib.util.module_from_spec(spec); sys.modules['supervisor'] = s; spec.loader.exec_module(s)\n"
        "sup = s.Supervisor()\n"
        f"p = s.Program('worker', [sys.executable, '-c', 'import time; time.sleep(60)'], s.Path({str(tmp_path / 'w.log')!r}))\n"
        "sup.start(p)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        line = parent.stdout.readline()
        child = int(re.search(r"pid (\d+)", line).group(1))
        assert running(child)

        parent.kill()
        parent.wait()

        wait_for(lambda: not running(child), timeout=10, what="the orphaned child to stop")
    finally:
        if parent.poll() is None:
            parent.kill()


def test_scripts_run_starts_one_worker_per_lane():
    """The customer worker serves replies and deliveries, the background worker the rest of the AI's work, at a
    lower CPU priority; together they consume every queue a task is published to (captain.lanes)."""
    from captain import lanes

    argvs = supervisor.worker_argvs(["celery", "-A", "config"])
    assert set(argvs) == {"worker", "background"}

    def queues(argv: list[str]) -> str:
        return argv[argv.index("-Q") + 1]

    assert queues(argvs["worker"]) == lanes.worker_queues(lanes.CUSTOMER)
    assert queues(argvs["background"]) == lanes.worker_queues(lanes.BACKGROUND)
    assert argvs["background"][:3] == ["nice", "-n", "10"]
    # Two workers on one host need their own node names (Celery warns of and mixes up duplicates).
    names = {argv[argv.index("-n", 3) + 1] for argv in argvs.values()}
    assert len(names) == 2


def test_the_customer_lane_holds_runs_in_greenlets_on_postgresql_only():
    """SQLite's calls hold the whole process, so greenlets only pay off on PostgreSQL (docs/deploy.md)."""

    def pool(database_url: str) -> tuple[str, str]:
        argv = supervisor.worker_argvs(["celery", "-A", "config"], database_url)["worker"]
        return argv[argv.index("--pool") + 1], argv[argv.index("--concurrency") + 1]

    assert pool("") == ("threads", "8")
    assert pool("sqlite:///var/db.sqlite3") == ("threads", "8")
    assert pool("postgres://helpdesk@127.0.0.1:5432/helpdesk") == ("gevent", "100")
    assert pool("postgresql://helpdesk@db/helpdesk") == ("gevent", "100")
