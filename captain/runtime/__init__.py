"""Framework-free runtime of the AI team: agents, tools, handoffs, the run loop and the model boundary.

Imports no Django, so it can be unit-tested with a scripted model and reused outside the helpdesk.
"""

from .model import (
    ModelClient,
    ModelError,
    ModelErrorKind,
    ModelGate,
    ModelResponse,
    ModelSettings,
    ToolCall,
)
from .openai_chat import OpenAIChatModel, make_openai_client
from .runner import RunHooks, Runner
from .types import (
    Agent,
    Artifact,
    ConfirmedCall,
    Handoff,
    HumanHandoff,
    Outcome,
    PendingCall,
    PlanningSettings,
    PlanState,
    PlanStep,
    Reply,
    Resolve,
    RunContext,
    RunError,
    RunEvent,
    RunResult,
    Tool,
    ToolFailed,
    ToolOutput,
    Usage,
    handoff_tool_name,
)

__all__ = [
    "Agent",
    "Artifact",
    "ConfirmedCall",
    "Handoff",
    "HumanHandoff",
    "ModelClient",
    "ModelError",
    "ModelErrorKind",
    "ModelGate",
    "ModelResponse",
    "ModelSettings",
    "OpenAIChatModel",
    "Outcome",
    "PendingCall",
    "PlanState",
    "PlanStep",
    "PlanningSettings",
    "Reply",
    "Resolve",
    "RunContext",
    "RunError",
    "RunEvent",
    "RunHooks",
    "RunResult",
    "Runner",
    "Tool",
    "ToolCall",
    "ToolFailed",
    "ToolOutput",
    "Usage",
    "handoff_tool_name",
    "make_openai_client",
]
