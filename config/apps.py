"""The project itself as an app, so its system checks (config.checks) run with every management command."""

from django.apps import AppConfig


class ProjectConfig(AppConfig):
    name = "config"
    verbose_name = "Captain Helpdesk project"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the system checks)
