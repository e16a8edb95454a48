"""ASGI entry point: what the web server runs (scripts/supervisor.py `web_server_argv`: gunicorn -k
uvicorn_worker.UvicornWorker config.asgi --forwarded-allow-ips "", the last so that uvicorn never rewrites the
client's address from X-Forwarded-For and DJANGO_TRUSTED_PROXY_COUNT alone decides who the client is).

ASGI rather than WSGI so that an open dashboard holds a coroutine, not a thread: the live-update streams
(helpdesk.realtime) stay open as long as a tab is, and a process serves hundreds of them. Ordinary views are
synchronous and run in Django's thread for sync code, as before.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_asgi_application()

# A server runs no system checks: refuse here to serve with DEBUG off and no real SECRET_KEY (config.E001), so
# gunicorn stops at start-up with the reason instead of answering every request with a 500.
from config.checks import refuse_unsafe_start  # noqa: E402  (needs the apps loaded above)

refuse_unsafe_start()
