"""Closing quiet conversations: the judge that decides a conversation is resolved."""
