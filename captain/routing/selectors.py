"""Reads of routing decisions."""

from __future__ import annotations

from django.db.models import QuerySet

from captain.routing.models import RoutingDecision
from helpdesk.models import Conversation


def conversation_routing_decisions(*, conversation: Conversation) -> QuerySet[RoutingDecision]:
    """Routing decisions of a conversation (from `access_conversation`), oldest first."""
    return RoutingDecision.objects.filter(conversation=conversation).order_by("id")
