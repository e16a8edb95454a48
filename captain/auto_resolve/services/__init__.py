"""Writes of captain.auto_resolve."""
