"""Writes of captain.knowledge."""
