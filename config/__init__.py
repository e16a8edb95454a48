"""Project package: settings, URLs, the Celery app and WSGI entry point."""

from .celery import app as celery_app

__all__ = ["celery_app"]
