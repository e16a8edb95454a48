"""REST API of captain.routing."""
