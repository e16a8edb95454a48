"""How a subprocess (a Celery worker) reaches the database the test process is using."""

from __future__ import annotations

from urllib.parse import quote

from django.db import connection


def database_url_for_subprocess() -> str:
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    if connection.vendor == "postgresql":
        auth = quote(s["USER"] or "")
        if s.get("PASSWORD"):
            auth += ":" + quote(s["PASSWORD"])
        host = s.get("HOST") or "127.0.0.1"
        port = s.get("PORT") or "5432"
        return f"postgres://{auth}@{host}:{port}/{s['NAME']}"
    raise RuntimeError(f"unsupported database vendor {connection.vendor}")
