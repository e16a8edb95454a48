"""Dashboard pages of captain.playground."""
