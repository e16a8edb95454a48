"""WSGI entry point (gunicorn config.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_wsgi_application()

# A WSGI server runs no system checks: refuse here to serve with DEBUG off and no real SECRET_KEY (config.E001),
# so gunicorn stops at start-up with the reason instead of answering every request with a 500.
from config.checks import refuse_unsafe_start  # noqa: E402  (needs the apps loaded above)

refuse_unsafe_start()
