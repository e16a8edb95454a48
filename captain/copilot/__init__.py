"""The agents' copilot: drafts and answers for a person working a conversation."""
