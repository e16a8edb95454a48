"""REST API of captain.assistants."""
