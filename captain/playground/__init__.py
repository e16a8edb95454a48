"""The playground: an admin tries a team without a customer, conversation or charge."""
