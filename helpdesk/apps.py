from django.apps import AppConfig


class HelpdeskConfig(AppConfig):
    name = "helpdesk"
    verbose_name = "Helpdesk"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The outbound allowlist's syntax, checked at start-up (helpdesk.E001); dashboard events (live
        # updates) for every saved conversation and new message.
        from .outbound import checks  # noqa: F401
        from .realtime import signals  # noqa: F401
        from .services.audit import register_helpdesk_models
        from .services.event_webhooks import connect_signals as connect_event_webhooks
        from .services.sign_ins import connect_signals as connect_sign_in_history

        # The audit log records every change of the account's configuration models (captain adds its own).
        register_helpdesk_models()
        # Outbound event webhooks for every saved conversation, message and rating (the integrations').
        connect_event_webhooks()
        # Sign-in history: every sign-in and refused attempt, the dashboard's and the admin's.
        connect_sign_in_history()
