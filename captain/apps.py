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
        _register_audited_models()


def _register_audited_models() -> None:
    """Captain's configuration in the account's audit log (helpdesk.services.audit; secrets by name are
    recorded as changed, never with a value). Run records and caches are not configuration."""
    from django.db.models import Model

    from captain.actions.models import CustomTool, Shortcut
    from captain.assistants.models import Assistant, AssistantInbox, ModelEndpoint, Scenario
    from captain.routing.models import RoutingConfig, RoutingEdge, RoutingNode, RoutingRule
    from helpdesk.services.audit import audit_register

    owned: tuple[type[Model], ...] = (Assistant, ModelEndpoint, CustomTool)
    per_assistant: tuple[type[Model], ...] = (
        Scenario,
        RoutingConfig,
        RoutingNode,
        RoutingEdge,
        RoutingRule,
        Shortcut,
    )
    for model in owned:
        audit_register(model)
    for model in per_assistant:
        audit_register(model, account_path="assistant.account_id")
    audit_register(AssistantInbox, account_path="inbox.account_id")
