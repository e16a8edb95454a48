"""Writes of captain.assistants."""
