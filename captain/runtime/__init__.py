"""Framework-free runtime of the AI team: agents, tools, handoffs, the run loop and the model boundary.

Imports no Django, so it can be unit-tested with a scripted model and reused outside the helpdesk.
"""

from .model import (
    ModelClient,
    ModelError,
    ModelErrorKind,
    ModelResponse,
    ModelSettings,
    OpenAIChatModel,
    ToolCall,
    make_openai_client,
)
from .runner import RunHooks, Runner
from .types import (
    Agent,
    Handoff,
    HumanHandoff,
    Outcome,
    Reply,
    Resolve,
    RunContext,
    RunError,
    RunEvent,
    RunResult,
    Tool,
    ToolOutput,
    Usage,
    handoff_tool_name,
)

__all__ = [
    "Agent",
    "Handoff",
    "HumanHandoff",
    "ModelClient",
    "ModelError",
    "ModelErrorKind",
    "ModelResponse",
    "ModelSettings",
    "OpenAIChatModel",
    "Outcome",
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
    "ToolOutput",
    "Usage",
    "handoff_tool_name",
    "make_openai_client",
]
