"""Writes of captain.memory."""
