"""REST API of captain.knowledge."""
