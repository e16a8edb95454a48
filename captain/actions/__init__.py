"""What the AI may do: built-in and custom tools, plans, confirmations and shortcuts."""
