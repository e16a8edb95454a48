"""E-mail settings from the environment: the console backend when nothing is configured (the embedded default
prints notifications to the log), SMTP as soon as EMAIL_HOST names a server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def email_settings(**env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("EMAIL_")}
    code = (
        "import json, config.settings as s; print(json.dumps({'backend': s.EMAIL_BACKEND, 'host': s.EMAIL_HOST,"
        " 'port': s.EMAIL_PORT, 'tls': s.EMAIL_USE_TLS, 'timeout': s.EMAIL_TIMEOUT}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "DJANGO_DEBUG": "1", "PYTHONPATH": str(ROOT), **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_console_by_default_and_smtp_when_a_host_is_set():
    assert email_settings()["backend"] == "django.core.mail.backends.console.EmailBackend"
    smtp = email_settings(EMAIL_HOST="smtp.example.com", EMAIL_PORT="587", EMAIL_USE_TLS="1")
    assert smtp == {
        "backend": "django.core.mail.backends.smtp.EmailBackend",
        "host": "smtp.example.com",
        "port": 587,
        "tls": True,
        "timeout": 10,
    }
