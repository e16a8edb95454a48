"""The AI team: assistants, scenarios, tools, the runtime that runs them, credits and telemetry."""
