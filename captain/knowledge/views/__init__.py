"""Dashboard pages of captain.knowledge."""
