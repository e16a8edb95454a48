"""Routing between the assistant and its scenarios: the graph, examples, corrections and drafted examples, and the admin's picture of the graph."""
