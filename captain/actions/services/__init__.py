"""Writes of captain.actions."""
