"""Answering a customer: reply jobs, runs of the team, outcomes, credits, the turn's context, suggestions and media, and the debug log and usage pages that show what the AI did."""
