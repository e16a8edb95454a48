"""REST API of captain, mounted at /api/v1/captain/. Every route is scoped to `accounts/<account_id>/`."""

from django.urls import path

from . import assistants, credits, faq, model_endpoints, routing, runs, scenarios

app_name = "captain-api"

ACCOUNT = "accounts/<int:account_id>/"
ASSISTANT = f"{ACCOUNT}assistants/<int:assistant_id>/"

urlpatterns = [
    path(f"{ACCOUNT}assistants/", assistants.AssistantCollectionApi.as_view(), name="assistant-list"),
    path(ASSISTANT, assistants.AssistantDetailApi.as_view(), name="assistant-detail"),
    path(f"{ASSISTANT}scenarios/", scenarios.ScenarioCollectionApi.as_view(), name="scenario-list"),
    path(
        f"{ASSISTANT}scenarios/<int:scenario_id>/",
        scenarios.ScenarioDetailApi.as_view(),
        name="scenario-detail",
    ),
    path(f"{ASSISTANT}faq/", faq.FaqEntryCollectionApi.as_view(), name="faq-list"),
    path(f"{ASSISTANT}faq/<int:faq_entry_id>/", faq.FaqEntryDetailApi.as_view(), name="faq-detail"),
    path(f"{ASSISTANT}routing/", routing.RoutingGraphApi.as_view(), name="assistant-routing"),
    path(
        f"{ACCOUNT}conversations/<int:conversation_id>/routing-decisions/",
        routing.ConversationRoutingDecisionsApi.as_view(),
        name="conversation-routing-decisions",
    ),
    path(f"{ACCOUNT}credits/", credits.CreditUsageApi.as_view(), name="credits"),
    path(
        f"{ACCOUNT}model-endpoints/",
        model_endpoints.ModelEndpointCollectionApi.as_view(),
        name="model-endpoint-list",
    ),
    path(
        f"{ACCOUNT}model-endpoints/<int:endpoint_id>/",
        model_endpoints.ModelEndpointDetailApi.as_view(),
        name="model-endpoint-detail",
    ),
    path(
        f"{ACCOUNT}conversations/<int:conversation_id>/runs/",
        runs.ConversationRunsApi.as_view(),
        name="conversation-runs",
    ),
]
