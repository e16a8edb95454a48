"""The website chat widget channel: the `Channel` (channel.py), the visitor's identity (identity.py), business
hours (helpdesk.business_hours) and the e-mail follow-up of away-hours questions (follow_up.py)."""

from helpdesk.business_hours import is_away

from .channel import MAX_TEXT_LENGTH, WidgetChannel, parse_file_message
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
    "is_away",
    "is_identified",
    "new_anonymous_source_id",
    "parse_file_message",
    "prechat_fields",
    "verify_identifier",
    "visitor_source_id",
    "visitor_token",
]
