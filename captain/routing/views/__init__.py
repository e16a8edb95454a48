"""Dashboard pages of captain.routing."""
