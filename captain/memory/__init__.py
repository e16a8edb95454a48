"""What the AI remembers about a contact: memory variables and their values."""
