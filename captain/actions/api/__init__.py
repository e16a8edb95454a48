"""REST API of captain.actions."""
