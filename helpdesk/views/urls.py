"""Dashboard URLs, mounted at the site root by config.urls: `/` and `/app/...`."""

from django.urls import path
from django.views.generic import RedirectView

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)

from . import (
    accounts,
    attachments,
    attributes,
    audit,
    bulk,
    canned,
    contacts,
    conversation_actions,
    conversations,
    events,
    invitations,
    languages,
    macros,
    notifications,
    reports,
    search,
    security,
    teams,
    typing,
    whatsapp_templates,
)
from .base import ACCOUNT, CONVERSATION

app_name = "dashboard"

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="dashboard:home"), name="root"),
    path("app/", accounts.home, name="home"),
    path("app/switch/", accounts.switch_account, name="switch-account"),
    path(ACCOUNT, accounts.account_home, name="account-home"),
    path(f"{ACCOUNT}lists/counts.json", conversations.folder_counts, name="folder-counts"),
    path(f"{ACCOUNT}lists/<slug:folder>/", conversations.conversation_list, name="conversation-list"),
    path(CONVERSATION, conversations.conversation_detail, name="conversation-detail"),
    path(f"{CONVERSATION}poll/", conversations.conversation_poll, name="conversation-poll"),
    path(f"{CONVERSATION}reply/", conversation_actions.conversation_reply, name="conversation-reply"),
    path(
        f"{CONVERSATION}status/<slug:action>/",
        conversation_actions.conversation_status,
        name="conversation-status",
    ),
    path(
        f"{CONVERSATION}assignee/", conversation_actions.conversation_assignee, name="conversation-assignee"
    ),
    path(f"{CONVERSATION}labels/", conversation_actions.conversation_label, name="conversation-label"),
    path(
        f"{CONVERSATION}priority/", conversation_actions.conversation_priority, name="conversation-priority"
    ),
    path(f"{CONVERSATION}team/", conversation_actions.conversation_team, name="conversation-team"),
    path(
        f"{CONVERSATION}attributes/<slug:target>/",
        attributes.conversation_attributes,
        name="conversation-attributes",
    ),
    path(f"{ACCOUNT}attachments/<id:attachment_id>/", attachments.attachment_file, name="attachment-file"),
    path("files/<str:token>/", attachments.shared_file, name="shared-file"),
]

# Each feature's views module lists its own URLs (paths under ACCOUNT / CONVERSATION like the ones above).
for module in (
    events,
    notifications,
    teams,
    reports,
    canned,
    bulk,
    macros,
    contacts,
    languages,
    search,
    typing,
    audit,
    security,
    whatsapp_templates,
    invitations,
):
    urlpatterns += module.urlpatterns
