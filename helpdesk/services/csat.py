"""Customer satisfaction: the rating request after resolution and the customer's answer.
(Being written: the CSAT owner fills in the bodies.)"""

from __future__ import annotations


def csat_request_after_resolution(*, conversation_id: int) -> None:
    return None
