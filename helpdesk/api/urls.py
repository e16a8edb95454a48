"""REST API of the helpdesk, mounted at /api/v1/. Every route is scoped to `accounts/<account_id>/`."""

from django.urls import include, path

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)

from . import attributes, canned_responses, contacts, conversations, languages

app_name = "helpdesk-api"

CONVERSATION = "accounts/<id:account_id>/conversations/<id:conversation_id>/"

urlpatterns = [
    path(
        "accounts/<id:account_id>/conversations/",
        conversations.ConversationListApi.as_view(),
        name="conversation-list",
    ),
    path(CONVERSATION, conversations.ConversationDetailApi.as_view(), name="conversation-detail"),
    path(
        f"{CONVERSATION}messages/",
        conversations.ConversationMessagesApi.as_view(),
        name="conversation-messages",
    ),
    path(f"{CONVERSATION}status/", conversations.ConversationStatusApi.as_view(), name="conversation-status"),
    path(f"{CONVERSATION}labels/", conversations.ConversationLabelApi.as_view(), name="conversation-labels"),
    path(
        f"{CONVERSATION}priority/",
        conversations.ConversationPriorityApi.as_view(),
        name="conversation-priority",
    ),
    path(
        f"{CONVERSATION}assignee/",
        conversations.ConversationAssigneeApi.as_view(),
        name="conversation-assignee",
    ),
    path(f"{CONVERSATION}team/", conversations.ConversationTeamApi.as_view(), name="conversation-team"),
    path(
        f"{CONVERSATION}custom-attributes/",
        attributes.ConversationAttributesApi.as_view(),
        name="conversation-custom-attributes",
    ),
    path(
        "accounts/<id:account_id>/contacts/<id:contact_id>/custom-attributes/",
        attributes.ContactAttributesApi.as_view(),
        name="contact-custom-attributes",
    ),
    path(
        "accounts/<id:account_id>/attribute-definitions/",
        attributes.DefinitionCollectionApi.as_view(),
        name="attribute-definition-list",
    ),
    path(
        "accounts/<id:account_id>/attribute-definitions/<id:definition_id>/",
        attributes.DefinitionDetailApi.as_view(),
        name="attribute-definition-detail",
    ),
    *canned_responses.urlpatterns,
    *contacts.urlpatterns,
    *languages.urlpatterns,
]
urlpatterns += [path("", include("helpdesk.api.teams")), path("", include("helpdesk.api.reports"))]
urlpatterns += [path("", include("helpdesk.api.csat"))]
urlpatterns += [path("", include("helpdesk.api.notifications"))]
urlpatterns += [path("", include("helpdesk.api.audit"))]
urlpatterns += [path("", include("helpdesk.api.event_webhooks"))]
urlpatterns += [path("", include("helpdesk.api.macros"))]
urlpatterns += [path("", include("helpdesk.api.sla"))]
urlpatterns += [path("", include("helpdesk.api.whatsapp_templates"))]
urlpatterns += [path("", include("helpdesk.api.invitations"))]
urlpatterns += [path("", include("helpdesk.api.security"))]
