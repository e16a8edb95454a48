"""Builders: database rows -> runtime agents (assistant -> triage agent, scenario -> specialist)."""

from captain.assistants.services.agents.builder import build_team

__all__ = ["build_team"]
