"""What every captain dashboard page shares, whatever its domain: the assistant a page shows (`choice`), a run's
span tree (`trace_tree`) and the live event stream (`live`)."""
