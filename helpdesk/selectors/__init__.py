"""Read operations and access_* helpers that fetch and authorize in one call."""

from __future__ import annotations

from django.http import Http404

from helpdesk.models import Account, Conversation, Label, Membership


def access_conversation(*, account_id: int, conversation_id: int) -> Conversation:
    """The conversation if it belongs to the account; 404 otherwise (never reveal other tenants' objects)."""
    conversation = (
        Conversation.objects.select_related("inbox", "contact", "contact_inbox")
        .filter(account_id=account_id, pk=conversation_id)
        .first()
    )
    if conversation is None:
        raise Http404("No such conversation.")
    return conversation


def accounts_for_user(user) -> list[Account]:
    return list(Account.objects.filter(memberships__user=user).order_by("id"))


def membership_for(*, user, account_id: int) -> Membership | None:
    return Membership.objects.filter(user=user, account_id=account_id).select_related("account").first()


def access_membership(*, user, account_id: int) -> Membership:
    """The caller's membership in the account; 404 when there is none (never reveal the account exists)."""
    membership = membership_for(user=user, account_id=account_id) if user.is_authenticated else None
    if membership is None:
        raise Http404("No such account.")
    return membership


def account_members(*, account_id: int):
    """Users with a membership in the account (the only people a conversation may be assigned to)."""
    from django.contrib.auth import get_user_model

    return get_user_model().objects.filter(memberships__account_id=account_id).order_by("id")


def conversation_list(*, account_id: int, status: str | None = None, inbox_id: int | None = None):
    """The account's conversations, most recently active first, optionally filtered by status and inbox."""
    conversations = (
        Conversation.objects.filter(account_id=account_id)
        .select_related("contact")
        .prefetch_related("labels")
        .order_by("-last_activity_at", "-id")
    )
    if status:
        conversations = conversations.filter(status=status)
    if inbox_id:
        conversations = conversations.filter(inbox_id=inbox_id)
    return conversations


def conversation_messages(*, conversation: Conversation):
    """The thread in order, notes and activities included (the API and dashboard are for people)."""
    from helpdesk.models import Message

    return Message.objects.filter(conversation=conversation).select_related("sender_user", "sender_contact")


def label_names(*, account_id: int) -> list[str]:
    """The account's labels, by name."""
    return list(Label.objects.filter(account_id=account_id).order_by("name").values_list("name", flat=True))
