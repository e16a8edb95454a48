"""The helpdesk domain: accounts, inboxes, contacts, conversations, messages and channels. Knows nothing of LLMs."""
