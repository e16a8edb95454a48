"""HTTP interfaces: channel webhooks and the REST API (DRF)."""
