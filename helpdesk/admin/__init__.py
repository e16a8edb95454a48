"""Django admin for the helpdesk, scoped per tenant.

Superusers see everything. Other staff users see and change only objects of accounts where they hold an
*admin* Membership: `AccountScopedAdminMixin` filters querysets, scopes foreign-key choices and re-checks on
save, and the same rule grants the permissions (no Django model permissions are needed for an account's admin).

One module per model family: `scoping` (the tenant rule, shared with captain's admins), `accounts`, `inboxes`
(its form in `inbox_form`), `conversations` (contacts, labels, messages too), `automation` (macros, rules), `sla` and `teams` (canned responses,
ratings, notifications too). Django's autodiscovery imports this package; importing the modules here registers
their admins, in the order the single module had.
"""

from __future__ import annotations

from . import (
    accounts,
    audit,
    automation,
    conversations,
    inboxes,
    sign_ins,
    sla,
    teams,
    webhooks,
    whatsapp_templates,
)
from .accounts import (
    AccountAdmin,
    AttributeDefinitionAdminForm,
    CustomAttributeDefinitionAdmin,
    MembershipInline,
)
from .conversations import (
    RECENT_MESSAGES,
    ContactAdmin,
    ContactInboxInline,
    ConversationAdmin,
    LabelAdmin,
    MessageAdmin,
    MessageInline,
    RecentMessagesFormSet,
    delivery_status_display,
)
from .inbox_form import PROVIDER_FIELD_TEXTS, InboxAdminForm, provider_field_name
from .inboxes import InboxAdmin, inbox_webhook_url
from .scoping import (
    SECRET_FIELD_NAMES,
    AccountScopedAdminMixin,
    AccountScopedInlineMixin,
    account_id_of,
    account_lookup_for,
    admin_account_ids,
    scoped_queryset,
)
from .teams import (
    CannedResponseAdmin,
    CsatResponseAdmin,
    NotificationAdmin,
    TeamAdmin,
    TeamMemberFormSet,
    TeamMemberInline,
)

__all__ = [
    "PROVIDER_FIELD_TEXTS",
    "RECENT_MESSAGES",
    "SECRET_FIELD_NAMES",
    "AccountAdmin",
    "AccountScopedAdminMixin",
    "AccountScopedInlineMixin",
    "AttributeDefinitionAdminForm",
    "CannedResponseAdmin",
    "ContactAdmin",
    "ContactInboxInline",
    "ConversationAdmin",
    "CsatResponseAdmin",
    "CustomAttributeDefinitionAdmin",
    "InboxAdmin",
    "InboxAdminForm",
    "LabelAdmin",
    "MembershipInline",
    "MessageAdmin",
    "MessageInline",
    "NotificationAdmin",
    "RecentMessagesFormSet",
    "TeamAdmin",
    "TeamMemberFormSet",
    "TeamMemberInline",
    "account_id_of",
    "account_lookup_for",
    "accounts",
    "admin_account_ids",
    "audit",
    "automation",
    "conversations",
    "delivery_status_display",
    "inbox_webhook_url",
    "inboxes",
    "provider_field_name",
    "scoped_queryset",
    "sign_ins",
    "sla",
    "teams",
    "webhooks",
    "whatsapp_templates",
]
