"""Writes of captain.routing."""
