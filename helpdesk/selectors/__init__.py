"""Read operations of helpdesk, and the access_* helpers that fetch and authorize in one call.

One module per subject: `accounts` (memberships, members, labels), `conversations` (one conversation, the API's
list), `dashboard` (the dashboard's folders and list pages), `messages` (threads, the poll, delivery status),
`inboxes`. Views and API views read through these, never through the ORM.
"""

from .accounts import (
    access_membership,
    account_labels,
    account_member,
    account_members,
    account_switcher_accounts,
    accounts_for_user,
    label_names,
    landing_membership,
    membership_for,
    membership_with_user,
)
from .conversations import access_conversation, conversation_list, dashboard_conversation
from .inboxes import inbox_for_webhook
from .messages import conversation_messages

__all__ = [
    "access_conversation",
    "access_membership",
    "account_labels",
    "account_member",
    "account_members",
    "account_switcher_accounts",
    "accounts_for_user",
    "conversation_list",
    "conversation_messages",
    "dashboard_conversation",
    "inbox_for_webhook",
    "label_names",
    "landing_membership",
    "membership_for",
    "membership_with_user",
]
