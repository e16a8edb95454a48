"""Writes of captain.playground."""
