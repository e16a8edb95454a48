"""Dashboard pages of captain.answering."""
