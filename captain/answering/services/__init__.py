"""Writes of captain.answering."""
