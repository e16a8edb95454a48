"""The website chat widget channel: the `Channel` (channel.py) and the visitor's identity (identity.py)."""

from .channel import MAX_TEXT_LENGTH, WidgetChannel
from .identity import (
    VISITOR_HEADER,
    allowed_origins,
    checked_origin,
    identified_source_id,
    identifier_hash,
    is_identified,
    new_anonymous_source_id,
    prechat_fields,
    verify_identifier,
    visitor_source_id,
    visitor_token,
)

__all__ = [
    "MAX_TEXT_LENGTH",
    "VISITOR_HEADER",
    "WidgetChannel",
    "allowed_origins",
    "checked_origin",
    "identified_source_id",
    "identifier_hash",
    "is_identified",
    "new_anonymous_source_id",
    "prechat_fields",
    "verify_identifier",
    "visitor_source_id",
    "visitor_token",
]
