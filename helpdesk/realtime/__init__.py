"""Real-time updates for the dashboard: what changed in an account, pushed to the browsers watching it.

Writers call `publish_after_commit` (helpdesk.realtime.publish); the web process relays an account's events to
its signed-in people as server-sent events (helpdesk.realtime.stream, helpdesk.views.events).
"""
