"""The one outbound HTTP policy: every URL the server fetches or posts to for a tenant (API channel callbacks,
provider APIs, model endpoints ...) goes through it. See `policy` for the rules and `transport` for how they
hold at connection time."""

from .errors import HostNotResolved, OutboundRefused, ResponseTooLarge
from .policy import check_url, validate_outbound_url
from .transport import outbound_client

__all__ = [
    "HostNotResolved",
    "OutboundRefused",
    "ResponseTooLarge",
    "check_url",
    "outbound_client",
    "validate_outbound_url",
]
