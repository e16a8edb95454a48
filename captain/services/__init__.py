"""Captain's write operations: runs, outcomes, credits."""
