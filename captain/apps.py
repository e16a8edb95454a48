from django.apps import AppConfig


class CaptainConfig(AppConfig):
    name = "captain"
    verbose_name = "Captain (AI team)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from captain import checks, telemetry  # noqa: F401  (registers system checks; configures tracing)

        telemetry.configure_tracing()
