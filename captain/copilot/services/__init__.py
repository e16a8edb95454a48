"""Writes of captain.copilot."""
