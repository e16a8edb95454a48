"""Start Captain Helpdesk's processes on the embedded defaults and keep them running: what `scripts/run` runs.

Order: redis-server (unless one answers at REDIS_URL), the bundled model (unless OPENAI_BASE_URL or
OPENAI_API_KEY is set), migrations, static files and the demo seed, then the Celery worker, Celery beat and the
web server. Each process waits for the one before it to be ready, so a broken step is named where it breaks.

Every process writes to `<var>/<name>.log`. This terminal shows when each is ready (seconds since start) and,
when one exits, its exit status and the last lines of its log. A process that exits is started again after a
backoff; one that crashes `--max-crashes` times in a row (each within `--stable-seconds` of its start) stops the
run with a message saying so, instead of looping unseen. SIGINT (Ctrl-C) or SIGTERM stops every process started
here, by the PID it was started with, in reverse order.

Why not a library: honcho/foreman stop everything when one process exits (no restarts), and supervisord runs as
a daemon with its own configuration and log files, so a crash is not shown where the user is looking; neither
waits for one process to be ready before starting the next.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parent.parent
LOG_TAIL_LINES = 20
DEMO_CALLBACK_PORT = "8082"
"""Where `manage.py captain_demo_chat` receives the demo's replies unless DEMO_CALLBACK_PORT says otherwise (the
command's own default is the same number: captain_demo_chat.DEFAULT_CALLBACK_PORT)."""
DEMO_SMTP_PORT = "8025"
"""Where `manage.py helpdesk_email_demo` runs the SMTP sink the demo e-mail inbox sends through unless DEMO_SMTP_PORT
says otherwise (the demo seed writes the same number into the inbox: captain_demo_seed.DEMO_SMTP_PORT)."""


def demo_outbound_allowlist(env: Mapping[str, str]) -> str:
    """HELPDESK_OUTBOUND_ALLOWED_HOSTS for the embedded demo: the two local ports the demo reaches, the demo
    chat's callback receiver and the e-mail demo's SMTP sink. Not `127.0.0.1` alone, which admits every port
    of the machine (Redis on REDIS_PORT, the model server, the web server) to any URL an account's
    administrator types into a custom tool or a knowledge import. The bundled model needs no entry: it is the operator's endpoint, which the outbound
    policy does not filter (only accounts' own endpoints go through it)."""
    callback = env.get("DEMO_CALLBACK_PORT") or DEMO_CALLBACK_PORT
    return f"127.0.0.1:{callback},127.0.0.1:{env.get('DEMO_SMTP_PORT') or DEMO_SMTP_PORT}"


class RunFailed(Exception):
    """The run cannot go on; the message says why, in words for the person at the terminal."""


@dataclass
class Program:
    """One long-running process."""

    name: str
    argv: list[str]
    log: Path
    ready: Callable[[Program], bool] | None = None
    """Polled after each start until true; None: ready as soon as it runs."""
    ready_timeout: float = 120.0
    env: dict[str, str] | None = None

    proc: subprocess.Popen | None = field(default=None, repr=False)
    started_at: float = 0.0
    log_offset: int = 0
    """Size of the log when the current process started: readiness looks only at what it wrote."""
    crashes_in_a_row: int = 0
    restart_at: float | None = None

    def new_output(self) -> str:
        try:
            with self.log.open("rb") as f:
                f.seek(self.log_offset)
                return f.read().decode(errors="replace")
        except FileNotFoundError:
            return ""


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM it if the supervisor dies without stopping it (SIGKILL, OOM).

    The normal path stops every child by PID; this is the safety net for when that path cannot run (Linux only).
    """
    try:
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(f.tell() - 64 * 1024, 0))
            text = f.read().decode(errors="replace")
    except FileNotFoundError:
        return "    (no log)"
    tail = text.splitlines()[-lines:]
    return "\n".join(f"    | {line}" for line in tail) if tail else "    (log is empty)"


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


class Supervisor:
    def __init__(
        self,
        *,
        out: TextIO = sys.stdout,
        max_crashes: int = 5,
        stable_seconds: float = 30.0,
        backoff_seconds: float = 2.0,
        stop_timeout: float = 15.0,
        started_at: float | None = None,
    ) -> None:
        self.out = out
        self.max_crashes = max_crashes
        self.stable_seconds = stable_seconds
        self.backoff_seconds = backoff_seconds
        self.stop_timeout = stop_timeout
        self.started_at = time.monotonic() if started_at is None else started_at
        self.programs: list[Program] = []
        self.stopping = False

    def say(self, text: str) -> None:
        self.show(f"[{time.monotonic() - self.started_at:6.1f}s] {text}")

    def show(self, text: str) -> None:
        # The terminal may be gone (closed window, `scripts/run | tee` after Ctrl-C): losing a line must never
        # keep the children from being stopped.
        try:
            print(text, file=self.out, flush=True)
        except (OSError, ValueError):
            self.out = open(os.devnull, "w")  # noqa: SIM115 (lives as long as the supervisor)

    # ---- starting ---------------------------------------------------------------------------------------------

    def _spawn(self, program: Program) -> None:
        program.log.parent.mkdir(parents=True, exist_ok=True)
        program.log_offset = program.log.stat().st_size if program.log.exists() else 0
        with program.log.open("ab") as log:
            # A session of its own: a Ctrl-C in the terminal reaches only this supervisor, which then stops
            # the children in order (the web server before the worker before Redis), each by its PID.
            program.proc = subprocess.Popen(
                program.argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **(program.env or {})},
                cwd=ROOT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        program.started_at = time.monotonic()
        program.restart_at = None

    def start(self, program: Program) -> None:
        """Start a program and wait until it is ready; a program that dies or hangs first fails the run."""
        self._spawn(program)
        self.programs.append(program)
        assert program.proc is not None
        deadline = time.monotonic() + program.ready_timeout
        while not (program.ready is None or program.ready(program)):
            if self.stopping:
                raise RunFailed("stopped while starting")
            if program.proc.poll() is not None:
                raise RunFailed(
                    f"{program.name} exited ({describe_exit(program.proc.returncode)}) before it was ready. "
                    f"Last lines of {program.log}:\n{log_tail(program.log)}"
                )
            if time.monotonic() > deadline:
                raise RunFailed(
                    f"{program.name} was not ready after {program.ready_timeout:.0f} s. "
                    f"Last lines of {program.log}:\n{log_tail(program.log)}"
                )
            time.sleep(0.25)
        self.say(f"{program.name} ready (pid {program.proc.pid}, log {program.log})")

    def run_once(self, name: str, argv: list[str], log: Path, *, show_output: bool = False) -> None:
        """A one-off step (migrate, collectstatic...): its output goes to `log`; failing fails the run."""
        log.parent.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            argv, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
        )
        with log.open("a") as f:
            f.write(result.stdout + result.stderr)
        if result.returncode != 0:
            raise RunFailed(
                f"{name} failed ({describe_exit(result.returncode)}). Last lines of {log}:\n{log_tail(log)}"
            )
        if show_output and result.stdout.strip():
            self.show(result.stdout.rstrip())
        self.say(f"{name} done")

    # ---- watching ---------------------------------------------------------------------------------------------

    def check(self) -> None:
        """One round: report exited programs, schedule or perform restarts; raise RunFailed to end the run."""
        now = time.monotonic()
        for program in self.programs:
            proc = program.proc
            if program.restart_at is not None:
                if now >= program.restart_at:
                    self._spawn(program)
                    self.say(f"{program.name} restarted (pid {program.proc.pid})")
                continue
            if proc is None or proc.poll() is None:
                continue
            uptime = now - program.started_at
            # A process that ran for a while and then exited starts a new series; quick exits accumulate.
            program.crashes_in_a_row = program.crashes_in_a_row + 1 if uptime < self.stable_seconds else 1
            report = (
                f"!! {program.name} (pid {proc.pid}) exited: {describe_exit(proc.returncode)} after "
                f"{uptime:.1f} s. Last lines of {program.log}:\n{log_tail(program.log)}"
            )
            if program.crashes_in_a_row >= self.max_crashes:
                raise RunFailed(
                    f"{report}\n!! {program.name} crashed {program.crashes_in_a_row} times in a row, each "
                    f"within {self.stable_seconds:.0f} s of starting: stopping everything. Fix the cause "
                    f"above and start again."
                )
            delay = min(self.backoff_seconds * 2 ** (program.crashes_in_a_row - 1), 60.0)
            self.say(
                f"{report}\n!! restarting {program.name} in {delay:.0f} s "
                f"(crash {program.crashes_in_a_row} of {self.max_crashes} in a row before the run stops)"
            )
            program.restart_at = now + delay

    def watch(self, poll_seconds: float = 0.5) -> None:
        while not self.stopping:
            self.check()
            time.sleep(poll_seconds)

    # ---- stopping ---------------------------------------------------------------------------------------------

    def stop_all(self) -> None:
        for program in reversed(self.programs):
            proc = program.proc
            if proc is None or proc.poll() is not None:
                continue
            try:
                os.kill(proc.pid, signal.SIGTERM)
                proc.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                self.say(
                    f"{program.name} (pid {proc.pid}) ignored SIGTERM for {self.stop_timeout:.0f} s: SIGKILL"
                )
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
            except ProcessLookupError:
                pass
            self.say(f"{program.name} stopped (pid {proc.pid})")

    def request_stop(self, signum: int, frame: object) -> None:
        self.stopping = True


# ---- the product's processes ----------------------------------------------------------------------------------


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _http_ok(url: str) -> bool:
    """The server answers (below 500). A redirect counts, not followed: with DEBUG off it points at https://."""
    try:
        with urllib.request.build_opener(_NoRedirect).open(url, timeout=2) as response:
            return response.status < 500
    except urllib.error.HTTPError as exc:
        return exc.code < 500
    except Exception:
        return False


def _redis_ping(url: str) -> bool:
    import redis  # the product's own client, from the virtualenv this runs in

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=1).ping())
    except redis.RedisError:
        return False


def web_server_argv(
    port: str | int, *, workers: int = 2, graceful_timeout: int = 10, access_log: bool = True
) -> list[str]:
    """The web server's command line (the end-to-end tests start the same one, tests.support.servers).

    ASGI (uvicorn workers under gunicorn): the live-update streams stay open as long as a dashboard tab is, and
    an event loop holds hundreds of them where a thread each would not (docs/dashboard.md, "Live updates").
    --timeout: with this worker class it is the event loop's heartbeat (a blocked loop is restarted), not a
    per-request limit, so open streams are not cut by it; streams end themselves after a few minutes.
    --graceful-timeout: on a restart, open streams get this long before the worker is stopped (they reconnect).
    --forwarded-allow-ips "": uvicorn trusts no X-Forwarded-For / X-Forwarded-Proto (its default trusts them
    from 127.0.0.1, or from FORWARDED_ALLOW_IPS), so the address Django sees is always the socket's peer and
    DJANGO_TRUSTED_PROXY_COUNT alone decides which forwarded entry is the client (helpdesk.client_address, the
    sign-in lockout and the webhooks' failed-authentication limit) and whether the request was HTTPS
    (SECURE_PROXY_SSL_HEADER). Otherwise a forger on this machine could claim a new address for every guess.
    """
    argv = [
        sys.executable,
        "-m",
        "gunicorn",
        "config.asgi",
        "-k",
        "uvicorn_worker.UvicornWorker",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--timeout",
        "60",
        "--graceful-timeout",
        str(graceful_timeout),
        "--forwarded-allow-ips",
        "",
    ]
    return [*argv, "--access-logfile", "-"] if access_log else argv


def worker_argvs(celery: list[str], database_url: str = "") -> dict[str, list[str]]:
    """The two Celery workers of the lanes, by program name (their logs are var/<name>.log).

    On PostgreSQL the customer lane runs gevent's pool: each run waits on the model in a greenlet, so the worker
    holds a hundred runs at once (docs/deploy.md, "Runs in flight"). SQLite's calls would hold every greenlet,
    so on the embedded default it keeps eight threads."""
    threads = ["--pool", "threads", "-l", "INFO"]
    on_postgres = database_url.startswith(("postgres://", "postgresql://"))
    customer_pool = (
        ["--pool", "gevent", "-l", "INFO", "--concurrency", "100"]
        if on_postgres
        else [
            *threads,
            "--concurrency",
            "8",
        ]
    )
    return {
        "worker": [
            *celery,
            "worker",
            "-n",
            "customer@%h",
            "-Q",
            "helpdesk,captain",
            *customer_pool,
        ],
        # `nice` execs the worker: the PID the supervisor stops is the worker's own.
        "background": [
            "nice",
            "-n",
            "10",
            *celery,
            "worker",
            "-n",
            "background@%h",
            "-Q",
            "captain_background",
            *threads,
            "--concurrency",
            "2",
        ],
    }


def run_product(sup: Supervisor, args: argparse.Namespace) -> None:
    sup.say("set up (system packages and virtualenv)")
    env = os.environ
    var = Path(env.get("HELPDESK_VAR_DIR") or ROOT / "var")
    var.mkdir(parents=True, exist_ok=True)
    bindir = Path(sys.executable).parent
    python = [sys.executable]
    port, redis_port, llm_port = (
        env.get("PORT", "8000"),
        env.get("REDIS_PORT", "6379"),
        env.get("LLM_PORT", "8081"),
    )
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # The embedded demo is a development setup: DEBUG on (settings default it off), so the demo is seeded and
    # the development key and plain HTTP are accepted. A deployment sets DJANGO_DEBUG=0 and DJANGO_SECRET_KEY.
    env.setdefault("DJANGO_DEBUG", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("REDIS_URL", f"redis://127.0.0.1:{redis_port}/0")
    env.setdefault("HELPDESK_PUBLIC_URL", f"http://127.0.0.1:{port}")
    # The demo's callback receiver (captain_demo_chat) listens on this machine, which the outbound policy
    # refuses for tenant URLs unless allowlisted: its port only. Set the variable (even empty) to choose for
    # yourself (a DEMO_CALLBACK_URL of your own needs its host:port there).
    env.setdefault("HELPDESK_OUTBOUND_ALLOWED_HOSTS", demo_outbound_allowlist(env))

    if _redis_ping(env["REDIS_URL"]):
        sup.say(f"using the Redis server already answering at {env['REDIS_URL']}")
    else:
        sup.start(
            Program(
                "redis",
                [
                    "redis-server",
                    "--port",
                    redis_port,
                    "--bind",
                    "127.0.0.1",
                    "--dir",
                    str(var),
                    "--appendonly",
                    "yes",
                ],
                var / "redis.log",
                ready=lambda _: _redis_ping(env["REDIS_URL"]),
                ready_timeout=30,
            )
        )

    if not env.get("OPENAI_BASE_URL") and not env.get("OPENAI_API_KEY"):
        base_url = f"http://127.0.0.1:{llm_port}/v1"
        sup.say(f"starting the bundled local model on {base_url} (the first start assembles ~490 MB)")
        sup.start(
            Program(
                "model",
                [*python, "-m", "captain.local_llm", "serve", "--port", llm_port],
                var / "local_llm.log",
                ready=lambda _: _http_ok(f"{base_url}/models"),
                ready_timeout=900,
            )
        )
        env["OPENAI_BASE_URL"] = base_url
        # Settings give the bundled model, which runs on this machine's CPU, a timeout that fits it.
        env["CAPTAIN_BUNDLED_MODEL"] = "1"

    manage = [*python, "manage.py"]
    sup.run_once("migrate", [*manage, "migrate", "--noinput", "-v0"], var / "setup.log")
    sup.run_once("collectstatic", [*manage, "collectstatic", "--noinput", "-v0"], var / "setup.log")
    if env["DJANGO_DEBUG"].strip().lower() in {"1", "true", "yes", "on"}:
        seed = [*manage, "captain_demo_seed", "--callback-url", env.get("DEMO_CALLBACK_URL", "")]
        sup.run_once("demo seed", seed, var / "setup.log", show_output=True)
    else:
        # The demo's credentials are public: never on a deployment that turned DEBUG off.
        sup.say("demo seed skipped (DJANGO_DEBUG is off)")

    # Two lanes (captain.lanes, docs/deploy.md): the customer worker serves replies and deliveries, the background
    # worker the team's background AI work (drafts, judgements, copilot, document processing) with two threads
    # and a lower CPU priority, so twelve documents being processed do not slow a customer's reply down; the
    # model gate (captain.model_gate) keeps the model's slots for customers across both.
    # The threads pool (gevent's on PostgreSQL, `worker_argvs`): AI runs wait on the model, and threads answered
    # 3.2x more replies per second than prefork in bench/webhook_throughput.py (docs/reliability.md). Celery does
    # not enforce time limits in these pools; the run deadline and the per-call model timeout bound a run instead.
    celery = [str(bindir / "celery"), "-A", "config"]
    # The worker that starts queues the prompt warm-up (captain.lanes); it runs while beat and web start.
    workers_started_at = time.time()
    for name, argv in worker_argvs(celery, env.get("DATABASE_URL", "")).items():
        sup.start(
            Program(
                name,
                argv,
                var / f"{name}.log",
                ready=lambda program: " ready." in program.new_output(),
            )
        )
    sup.start(
        Program(
            "beat",
            [*celery, "beat", "-l", "INFO", "--schedule", str(var / "celerybeat-schedule")],
            var / "beat.log",
            ready=lambda program: "beat: Starting..." in program.new_output(),
        )
    )
    sup.start(
        Program(
            "web",
            web_server_argv(port),
            var / "web.log",
            ready=lambda _: _http_ok(f"http://127.0.0.1:{port}/auth/login/"),
        )
    )
    wait_for_prompt_warm_up(sup, env, workers_started_at)
    sup.say(f"==> Captain Helpdesk on {env['HELPDESK_PUBLIC_URL']}  (admin: /admin/  API docs: /api/docs/)")
    shown_python = (
        os.path.relpath(bindir / "python", ROOT) if bindir.is_relative_to(ROOT) else bindir / "python"
    )
    sup.show(
        f'    try it: {shown_python} manage.py captain_demo_chat "Can I return an item I bought last week?"\n'
        f"    logs: {var}/*.log   stop: Ctrl-C"
    )


PROMPT_WARMED_KEY = "captain:prompt_warm:finished"
"""Written by the start-up prompt warm-up when it is over (captain.answering.services.warmup.WARMED_KEY)."""


def wait_for_prompt_warm_up(
    sup: Supervisor, env: Mapping[str, str], since: float, timeout: float = 240.0
) -> bool:
    """Say the helpdesk is ready only once the model has read the assistants' fixed prompts: a question asked
    before that read its whole prompt (~830 tokens, 9 s on the bundled 0.5B model on two cores) instead of only
    what is new. Waits for the warm-up the starting worker queued (a marker in Redis newer than `since`), at most
    `timeout` s; a warm-up that is off (CAPTAIN_PROMPT_WARM_ASSISTANTS=0) or does not finish is not waited for."""
    import json

    import redis

    if env.get("CAPTAIN_PROMPT_WARM_ASSISTANTS", "").strip() == "0":
        return False
    client = redis.Redis.from_url(env["REDIS_URL"], socket_connect_timeout=0.5, socket_timeout=2)
    deadline = time.monotonic() + timeout
    while not sup.stopping and time.monotonic() < deadline:
        try:
            raw = client.get(PROMPT_WARMED_KEY)
        except redis.RedisError:
            raw = None
        finished = json.loads(raw) if raw else None
        if finished and float(finished.get("at", 0)) >= since:
            sup.say(f"prompt warm-up done ({finished.get('warmed', 0)} prompt prefixes read by the model)")
            return True
        sup.check()  # a process that exits while we wait is reported and restarted as usual
        time.sleep(0.5)
    if not sup.stopping:
        sup.say(f"prompt warm-up not finished after {timeout:.0f} s: the first replies may be slower")
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-crashes", type=int, default=int(os.environ.get("RUN_MAX_CRASHES", 5)))
    parser.add_argument("--stable-seconds", type=float, default=30.0)
    args = parser.parse_args(argv)
    # scripts/run passes when it began (before installing), so the timeline counts from the command.
    began = os.environ.get("RUN_STARTED_AT_EPOCH")
    started_at = time.monotonic() - (time.time() - float(began)) if began else None
    sup = Supervisor(max_crashes=args.max_crashes, stable_seconds=args.stable_seconds, started_at=started_at)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, sup.request_stop)
    status = 0
    try:
        run_product(sup, args)
        sup.watch()
    except RunFailed as exc:
        if not sup.stopping:
            sup.say(str(exc))
            status = 1
    finally:
        sup.stopping = True
        sup.say("stopping")
        sup.stop_all()
    return status


if __name__ == "__main__":
    sys.exit(main())
