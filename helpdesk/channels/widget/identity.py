"""Who a widget visitor is: the opaque visitor token, the identity check of `setUser`, the allowed origins.

Pure functions over the inbox's fields, so the public visitor API (helpdesk.api.widget) and the channel share one
definition:
- the website token is the inbox's `webhook_token` (public: it is written into the customer's page);
- the identity secret is the inbox's `secret` (write-only in the admin and API, like every channel's secret): the
  customer's backend computes `identifier_hash = hex(HMAC-SHA256(secret, identifier))`;
- the allowed origins are `provider_config["allowed_origins"]`: exact `scheme://host[:port]` origins separated by
  spaces or commas (a page on any other origin, a subdomain included, is refused).

A visitor token is signed (django.core.signing, the server's SECRET_KEY) and names the inbox and the visitor's
source id, so no table is needed to look it up and a token from one inbox is worthless on another. It does not
expire: a returning visitor continues the same conversation, as the page keeps the token in its storage.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.core import signing

from ..base import WebhookRejected

if TYPE_CHECKING:
    from helpdesk.models import Inbox

VISITOR_HEADER = "X-Visitor-Token"
_SALT = "helpdesk.channels.widget.visitor"
ANONYMOUS_PREFIX = "visitor:"
"""Source id of a visitor the page has not identified: a random id the server chose."""
IDENTIFIED_PREFIX = "user:"
"""Source id of a visitor identified by `setUser` with a valid identifier hash: the customer's own user id."""
MAX_IDENTIFIER_LENGTH = 200


def new_anonymous_source_id() -> str:
    return ANONYMOUS_PREFIX + secrets.token_hex(16)


def identified_source_id(identifier: str) -> str:
    return IDENTIFIED_PREFIX + identifier


def visitor_token(*, inbox_id: int, source_id: str) -> str:
    """The opaque token the page keeps for the visitor `source_id` of inbox `inbox_id`."""
    return signing.dumps({"i": inbox_id, "s": source_id}, salt=_SALT, compress=True)


def visitor_source_id(inbox: Inbox, token: str) -> str:
    """The visitor the token names; WebhookRejected(401) unless it was issued by us for this inbox."""
    if not token:
        raise WebhookRejected(401, "visitor_token_missing", f"{VISITOR_HEADER} is required.")
    try:
        data: Any = signing.loads(token, salt=_SALT)
    except signing.BadSignature as exc:
        raise WebhookRejected(401, "visitor_token_invalid", "The visitor token is not valid.") from exc
    if not isinstance(data, dict) or data.get("i") != inbox.pk or not isinstance(data.get("s"), str):
        raise WebhookRejected(401, "visitor_token_invalid", "The visitor token is not valid for this inbox.")
    return str(data["s"])


def identifier_hash(secret: str, identifier: str) -> str:
    """What the customer's backend computes for `setUser` (hex HMAC-SHA256 of the identifier)."""
    return hmac.new(secret.encode(), identifier.encode(), hashlib.sha256).hexdigest()


def verify_identifier(inbox: Inbox, identifier: str, given_hash: str) -> None:
    """WebhookRejected(403) unless `given_hash` is the identifier's HMAC with the inbox's secret."""
    if not identifier or len(identifier) > MAX_IDENTIFIER_LENGTH:
        raise WebhookRejected(
            400, "invalid_identifier", f"identifier must be 1 to {MAX_IDENTIFIER_LENGTH} characters."
        )
    expected = identifier_hash(inbox.secret, identifier)
    # Bytes, so a non-ASCII forgery is compared in constant time too instead of raising.
    if not hmac.compare_digest(expected.encode(), given_hash.encode("utf-8", "replace")):
        raise WebhookRejected(
            403, "identifier_hash_invalid", "identifier_hash does not match the identifier."
        )


def normalized_origin(value: str) -> str:
    """`scheme://host[:port]` in lower case, without a default port; "" when `value` is not an origin."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return ""
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ""
    default = {"http": 80, "https": 443}[parts.scheme]
    suffix = f":{port}" if port is not None and port != default else ""
    return f"{parts.scheme}://{parts.hostname.lower()}{suffix}"


def origins_in(value: str) -> list[str]:
    """The entries of an allowed-origins setting (separated by spaces, commas or new lines), as written."""
    return [item for item in re.split(r"[\s,]+", value) if item]


def allowed_origins(inbox: Inbox) -> frozenset[str]:
    config = inbox.provider_config if isinstance(inbox.provider_config, dict) else {}
    configured = config.get("allowed_origins")
    if not isinstance(configured, str):
        return frozenset()
    return frozenset(filter(None, (normalized_origin(item) for item in origins_in(configured))))


def checked_origin(inbox: Inbox, headers: Mapping[str, str]) -> str:
    """The request's Origin when the inbox allows it; WebhookRejected(403) otherwise (also without one: the
    visitor API serves the widget in a browser, which always names the page's origin on these requests)."""
    origin = normalized_origin(headers.get("Origin", ""))
    if not origin:
        raise WebhookRejected(403, "origin_required", "The request names no page origin.")
    if origin not in allowed_origins(inbox):
        raise WebhookRejected(403, "origin_not_allowed", "This page's origin may not use this widget.")
    return origin


def prechat_fields(inbox: Inbox) -> list[str]:
    """The pre-chat form's fields (`provider_config["prechat_fields"]`: "name", "email" or both), in order."""
    config = inbox.provider_config if isinstance(inbox.provider_config, dict) else {}
    value = config.get("prechat_fields")
    words = value.split() if isinstance(value, str) else []
    return [field for field in ("name", "email") if field in words]


def is_identified(source_id: str) -> bool:
    return source_id.startswith(IDENTIFIED_PREFIX)
