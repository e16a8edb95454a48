"""REST API of captain.answering."""
