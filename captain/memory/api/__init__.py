"""REST API of captain.memory."""
