"""Production refuses unsafe settings: with DEBUG off (the default) a missing, empty, development or weak
SECRET_KEY stops `manage.py` commands and the WSGI server at start-up (config.E001), and the production
environment documented in docs/security.md passes `manage.py check --deploy` with no warning at all.

Each case runs in its own process, as an operator would start it: settings are read once, from the
environment, at start-up."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.servers import ROOT, free_port

# docs/security.md, "Production settings": what an operator sets (the values are examples).
PRODUCTION_ENV = {
    "DJANGO_SECRET_KEY": "kq3V9x-2LmT8pZ0wR7sYc4NbH1jFd6GeUa5QiOoXvKzWnEyMtBrCuDlAsPhJgIf",
    "DJANGO_ALLOWED_HOSTS": "helpdesk.example.com",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://helpdesk.example.com",
    "HELPDESK_PUBLIC_URL": "https://helpdesk.example.com",
    "DJANGO_TRUSTED_PROXY_COUNT": "1",
}


def environment(tmp_path: Path, **env: str) -> dict[str, str]:
    """This process's environment without the test run's Django settings (tests.support.test_environment):
    the start-up of a fresh server with only `env` set. A database of its own, so nothing touches the tests'."""
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "HELPDESK_", "DATABASE_URL"))
    }
    return {
        **clean,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "HELPDESK_VAR_DIR": str(tmp_path),
        **env,
    }


def manage(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment(tmp_path, **env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_check_deploy_passes_with_the_documented_production_environment(tmp_path):
    result = manage(tmp_path, "check", "--deploy", "--fail-level", "WARNING", **PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_debug_is_off_unless_asked_for(tmp_path):
    shown = manage(tmp_path, "diffsettings", "--all", **PRODUCTION_ENV).stdout
    assert "DEBUG = False" in shown
    for setting in (
        "SECURE_SSL_REDIRECT = True",
        "SESSION_COOKIE_SECURE = True",
        "CSRF_COOKIE_SECURE = True",
        "SECURE_HSTS_SECONDS = 31536000",
        "SECURE_PROXY_SSL_HEADER = ('HTTP_X_FORWARDED_PROTO', 'https')",
    ):
        assert setting in shown


BAD_KEYS = {
    "missing": None,
    "empty": "",
    "development key": "dev-only-insecure-key",
    "django-insecure prefix": "django-insecure-" + "x7Kq2mVt9pLs4RdW8nZc1Bf6Hj3Gy0Ue5Ao" * 2,
    "short": "s3cr3t-but-only-thirty-characters",
    "few distinct characters": "ab" * 40,
}


@pytest.mark.parametrize("key", BAD_KEYS.values(), ids=BAD_KEYS.keys())
def test_an_unsafe_secret_key_stops_every_command_with_debug_off(tmp_path, key):
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "DJANGO_SECRET_KEY"}
    if key is not None:
        env["DJANGO_SECRET_KEY"] = key
    # Not a deploy-only check: plain `check`, and `migrate` (what scripts/run and deployments run first).
    for command in (["check"], ["migrate", "--noinput"]):
        result = manage(tmp_path, *command, **env)
        output = result.stdout + result.stderr
        assert result.returncode != 0, output
        assert "config.E001" in output
        assert "Set DJANGO_SECRET_KEY" in output
        assert "Applying" not in output  # migrate stopped before migrating anything


def test_debug_on_accepts_the_development_key(tmp_path):
    result = manage(tmp_path, "check", DJANGO_DEBUG="1")
    assert result.returncode == 0, result.stdout + result.stderr


def test_gunicorn_refuses_to_start_without_a_secret_key(tmp_path):
    """A WSGI server runs no system checks; config.wsgi applies config.E001 itself, so gunicorn exits at
    start-up with the reason instead of answering every request with a 500."""
    gunicorn = shutil.which("gunicorn", path=str(Path(sys.executable).parent))
    assert gunicorn is not None
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "DJANGO_SECRET_KEY"}
    result = subprocess.run(
        [gunicorn, "config.wsgi", "--bind", f"127.0.0.1:{free_port()}", "--workers", "1"],
        cwd=ROOT,
        env=environment(tmp_path, **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    assert "SECRET_KEY is missing or empty and DEBUG is off" in result.stderr
    assert "Set DJANGO_SECRET_KEY" in result.stderr


def test_celery_worker_refuses_to_start_without_a_secret_key(tmp_path):
    """Celery runs the system checks but ignores them; the worker_init hook in config.celery refuses instead."""
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "DJANGO_SECRET_KEY"}
    result = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "solo", "-l", "WARNING"],
        cwd=ROOT,
        env=environment(tmp_path, REDIS_URL=f"redis://127.0.0.1:{free_port()}/0", **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    assert "Refusing to start: SECRET_KEY is missing or empty and DEBUG is off" in result.stderr


def test_gunicorn_starts_with_the_production_environment(tmp_path):
    """The same start-up with a real key gets as far as serving (stopped by the PID we started)."""
    from tests.support.servers import stop_process, wait_for

    gunicorn = shutil.which("gunicorn", path=str(Path(sys.executable).parent))
    port = free_port()
    log = tmp_path / "gunicorn.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [gunicorn, "config.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
            cwd=ROOT,
            env=environment(tmp_path, **PRODUCTION_ENV),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(
            lambda: "Booting worker" in log.read_text() or proc.poll() is not None,
            timeout=60,
            what="gunicorn",
        )
        wait_for(lambda: "Worker failed" in log.read_text() or _answers(port), timeout=60, what="an answer")
        assert proc.poll() is None, log.read_text()
        assert "Worker failed" not in log.read_text()
    finally:
        stop_process(proc)


def _answers(port: int) -> bool:
    import http.client

    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        connection.request("GET", "/auth/login/", headers={"Host": "helpdesk.example.com"})
        status = connection.getresponse().status
    except OSError:
        return False
    # Plain HTTP with SECURE_SSL_REDIRECT and no X-Forwarded-Proto: sent to https.
    return status == 301
