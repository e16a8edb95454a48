"""One module per channel: verify a webhook, parse it into InboundMessages, send an outgoing message."""
