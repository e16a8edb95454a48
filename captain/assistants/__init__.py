"""Assistants and their scenarios: the builder's configuration (instructions, model endpoints, inboxes), the prompts it is written in, and the runtime agents built from it."""
