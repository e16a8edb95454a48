"""Dashboard pages of captain.memory."""
