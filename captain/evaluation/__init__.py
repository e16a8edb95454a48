"""Test before launch: an admin's question sets, run through the production team without charge, marked and
compared run against run."""
