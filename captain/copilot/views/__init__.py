"""Dashboard pages of captain.copilot."""
