from django.apps import AppConfig


class HelpdeskConfig(AppConfig):
    name = "helpdesk"
    verbose_name = "Helpdesk"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Dashboard events (live updates) for every saved conversation and new message.
        from .realtime import signals  # noqa: F401
