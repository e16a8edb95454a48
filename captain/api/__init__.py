"""REST API for assistants, scenarios, FAQ entries, runs and credit usage."""
