"""The README's first command, checked the way a newcomer runs it: `scripts/run` on a runtime-only virtualenv.

    python3 scripts/first_run_check.py [--keep]

Creates a new virtualenv from requirements.txt alone (no test tools), starts `scripts/run` with it on free
loopback ports and a throwaway var directory (its own redis-server, the bundled model, worker, beat, web), sends
the README's two demo messages with `captain_demo_chat`, and requires a delivered AI reply and a human handoff.
It fails if `scripts/run` reports that any supervised process exited, and stops everything by the PIDs that
`scripts/run` started. Prints the timeline from the command to the first delivered reply. Only 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READY_MARK = "==> Captain Helpdesk on"
DEMOS = [
    # (the README's demo message, the run outcome it must end in)
    ("Can I return an item I bought last week?", "reply"),
    ("Please let me talk to a person", "human_handoff"),
]


# Every module of the product imports on the runtime virtualenv, not only the ones the demo happens to reach.
IMPORT_EVERYTHING = """
import importlib, pkgutil, django
django.setup()
for package in ("config", "helpdesk", "captain"):
    for module in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
        if ".migrations." not in module.name:
            importlib.import_module(module.name)
print("imported")
"""


class CheckFailed(Exception):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(**extra: str) -> dict[str, str]:
    """The caller's environment without anything that would point the product elsewhere (a newcomer's shell)."""
    drop = (
        "OPENAI_",
        "CAPTAIN_",
        "HELPDESK_",
        "DJANGO_",
        "CELERY_",
        "DATABASE_URL",
        "REDIS_URL",
        "VIRTUAL_ENV",
        "DEMO_",  # DEMO_CALLBACK_URL / _PORT: the check sets its own
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    return {**env, **extra}


def pids_started(output: str) -> set[int]:
    return {int(pid) for pid in re.findall(r"\(pid (\d+)", output)}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is not running; /proc tells.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the virtualenv and var directory")
    parser.add_argument("--startup-timeout", type=float, default=1200.0)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="captain-first-run-"))
    port, redis_port, llm_port = free_port(), free_port(), free_port()
    env = clean_env(
        VENV=str(work / "venv"),
        HELPDESK_VAR_DIR=str(work / "var"),
        PORT=str(port),
        REDIS_PORT=str(redis_port),
        LLM_PORT=str(llm_port),
        # scripts/run allowlists this port for the outbound policy; demo_chat (same env) receives replies on it.
        DEMO_CALLBACK_PORT=str(free_port()),
        PYTHONUNBUFFERED="1",
    )
    out_path = work / "scripts-run.out"
    began = time.monotonic()
    print(f"==> scripts/run with a new runtime-only virtualenv in {work}", flush=True)
    with out_path.open("wb") as out:
        run = subprocess.Popen(
            [str(ROOT / "scripts" / "run")],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    timeline: list[str] = []
    status = 1
    try:
        wait_until_ready(run, out_path, args.startup_timeout)
        timeline.append(f"{time.monotonic() - began:7.1f}s  scripts/run ready")
        demo_env = {
            **env,
            # As the README's second terminal does: the embedded demo's development settings, like scripts/run.
            "DJANGO_DEBUG": "1",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
            "HELPDESK_PUBLIC_URL": f"http://127.0.0.1:{port}",
        }
        imported = subprocess.run(
            [str(work / "venv" / "bin" / "python"), "-c", IMPORT_EVERYTHING],
            cwd=ROOT,
            env=demo_env,
            capture_output=True,
            text=True,
            check=False,
        )
        if imported.returncode != 0:
            raise CheckFailed(
                f"a product module does not import on the runtime virtualenv:\n{imported.stderr}"
            )
        page_loads(f"http://127.0.0.1:{port}")
        for text, expected in DEMOS:
            started = time.monotonic()
            shown = demo_chat(work / "venv", demo_env, text)
            outcome = re.search(r"outcome=(\w+)", shown)
            if outcome is None or outcome.group(1) != expected:
                raise CheckFailed(f"{text!r}: expected outcome={expected}, got:\n{shown}")
            if "delivered to callback:" not in shown:
                raise CheckFailed(f"{text!r}: nothing was delivered to the demo's callback:\n{shown}")
            timeline.append(
                f"{time.monotonic() - began:7.1f}s  {expected} delivered for {text!r} "
                f"({time.monotonic() - started:.1f} s)"
            )
        output = out_path.read_text(errors="replace")
        if run.poll() is not None:
            raise CheckFailed(f"scripts/run exited ({run.returncode}) during the check")
        if "!! " in output:
            raise CheckFailed("a supervised process exited during the check (see scripts/run's output below)")
        status = 0
    except CheckFailed as exc:
        print(f"FAILED: {exc}", flush=True)
    finally:
        stopped_cleanly = stop(run, out_path)
        output = out_path.read_text(errors="replace")
        if status != 0 or not stopped_cleanly:
            print("---- scripts/run output ----\n" + output, flush=True)
            for log in sorted((work / "var").glob("*.log")):
                tail = log.read_text(errors="replace").splitlines()[-30:]
                print(f"---- {log.name} (last lines) ----\n" + "\n".join(tail), flush=True)
            status = 1
        else:
            print("---- timeline (seconds since `scripts/run` was started) ----")
            for line in output.splitlines():
                if re.match(r"\[\s*[\d.]+s\] ", line) and "==>" not in line:
                    print("   " + line)
            print("\n".join(timeline), flush=True)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("first run check: " + ("passed" if status == 0 else "FAILED"), flush=True)
    return status


def wait_until_ready(run: subprocess.Popen, out_path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while READY_MARK not in out_path.read_text(errors="replace"):
        if run.poll() is not None:
            raise CheckFailed(f"scripts/run exited ({run.returncode}) before the product was up")
        if time.monotonic() > deadline:
            raise CheckFailed(f"the product was not up after {timeout:.0f} s")
        time.sleep(0.5)


def page_loads(base_url: str) -> None:
    """The pages a newcomer opens first, with their assets served by us (the API docs must work offline)."""
    docs = fetch(f"{base_url}/api/docs/")
    bundle = re.search(r'[^"\']*swagger-ui-bundle\.js', docs)
    if bundle is None or bundle.group(0).startswith(("http:", "https:", "//")):
        raise CheckFailed("/api/docs/ does not load Swagger UI from this server")
    fetch(base_url + bundle.group(0))
    fetch(f"{base_url}/admin/login/")
    fetch(f"{base_url}/auth/login/")


def fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.read().decode(errors="replace")
    except OSError as exc:
        raise CheckFailed(f"GET {url}: {exc}") from None


def demo_chat(venv: Path, env: dict[str, str], text: str) -> str:
    result = subprocess.run(
        [str(venv / "bin" / "python"), "manage.py", "captain_demo_chat", text],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    shown = result.stdout + result.stderr
    print(f"$ manage.py captain_demo_chat {text!r}\n{shown.rstrip()}", flush=True)
    if result.returncode != 0:
        raise CheckFailed(f"captain_demo_chat exited with {result.returncode}")
    return shown


def stop(run: subprocess.Popen, out_path: Path) -> bool:
    """SIGTERM to scripts/run (the supervisor, by the PID we started); every process it started must be gone."""
    if run.poll() is None:
        os.kill(run.pid, signal.SIGTERM)
        try:
            run.wait(timeout=90)
        except subprocess.TimeoutExpired:
            print("scripts/run did not stop within 90 s: SIGKILL", flush=True)
            os.kill(run.pid, signal.SIGKILL)
            run.wait()
    leftovers = [pid for pid in pids_started(out_path.read_text(errors="replace")) if alive(pid)]
    for pid in leftovers:
        os.kill(pid, signal.SIGKILL)
    if leftovers:
        print(f"processes left running after scripts/run stopped (killed now): {leftovers}", flush=True)
    return run.returncode == 0 and not leftovers


if __name__ == "__main__":
    sys.exit(main())
