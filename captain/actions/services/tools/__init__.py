"""Built-in tools a model may call. Each wraps a helpdesk service, takes account and conversation ids from the
run context (never from model arguments), and has a strict JSON schema validated before it runs."""

from captain.actions.services.tools.builtin import BUILTIN_TOOL_NAMES, SCENARIO_TOOL_NAMES, build_tools

__all__ = ["BUILTIN_TOOL_NAMES", "SCENARIO_TOOL_NAMES", "build_tools"]
