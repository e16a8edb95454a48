from django.apps import AppConfig


class CaptainConfig(AppConfig):
    name = "captain"
    verbose_name = "Captain (AI team)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Every task registered in every process (web, worker, shell): services queue tasks by name
        # (captain.queue), never by importing a task module.
        from captain import (  # noqa: F401  (registers system checks; configures tracing)
            checks,
            lanes,
            tasks,
            telemetry,
        )

        telemetry.configure_tracing()
        lanes.connect_signals()
