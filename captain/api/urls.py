"""REST API of captain, mounted at /api/v1/captain/. Every route is scoped to `accounts/<account_id>/`."""

from django.urls import path

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from captain.actions.api import custom_tools, shortcuts
from captain.answering.api import credits, runs
from captain.assistants.api import assistants, model_endpoints, scenarios
from captain.evaluation.api import evaluation
from captain.knowledge.api import faq, knowledge
from captain.memory.api import memory
from captain.routing.api import reroute, routing, routing_examples

app_name = "captain-api"

ACCOUNT = "accounts/<id:account_id>/"
ASSISTANT = f"{ACCOUNT}assistants/<id:assistant_id>/"
EVAL_SET = f"{ACCOUNT}eval-sets/<id:set_id>/"
EVAL_RUN = f"{ACCOUNT}eval-runs/<id:run_id>/"

urlpatterns = [
    path(f"{ACCOUNT}assistants/", assistants.AssistantCollectionApi.as_view(), name="assistant-list"),
    path(ASSISTANT, assistants.AssistantDetailApi.as_view(), name="assistant-detail"),
    path(f"{ASSISTANT}scenarios/", scenarios.ScenarioCollectionApi.as_view(), name="scenario-list"),
    path(
        f"{ASSISTANT}scenarios/<id:scenario_id>/",
        scenarios.ScenarioDetailApi.as_view(),
        name="scenario-detail",
    ),
    path(f"{ASSISTANT}faq/", faq.FaqEntryCollectionApi.as_view(), name="faq-list"),
    path(f"{ASSISTANT}faq/<id:faq_entry_id>/", faq.FaqEntryDetailApi.as_view(), name="faq-detail"),
    path(f"{ASSISTANT}faq/<id:faq_entry_id>/approve/", faq.FaqEntryApproveApi.as_view(), name="faq-approve"),
    path(f"{ASSISTANT}faq/<id:faq_entry_id>/reject/", faq.FaqEntryRejectApi.as_view(), name="faq-reject"),
    path(f"{ASSISTANT}faq/review/", faq.FaqReviewApi.as_view(), name="faq-review"),
    path(
        f"{ASSISTANT}documents/<id:document_id>/faq-drafts/",
        faq.DocumentFaqDraftsApi.as_view(),
        name="document-faq-drafts",
    ),
    path(
        f"{ACCOUNT}conversations/<id:conversation_id>/faq-drafts/",
        faq.ConversationFaqDraftsApi.as_view(),
        name="conversation-faq-drafts",
    ),
    path(f"{ASSISTANT}documents/", knowledge.DocumentCollectionApi.as_view(), name="document-list"),
    path(
        f"{ASSISTANT}documents/<id:document_id>/",
        knowledge.DocumentDetailApi.as_view(),
        name="document-detail",
    ),
    path(
        f"{ASSISTANT}documents/<id:document_id>/resync/",
        knowledge.DocumentResyncApi.as_view(),
        name="document-resync",
    ),
    path(
        f"{ASSISTANT}documents/<id:document_id>/chunks/",
        knowledge.DocumentChunksApi.as_view(),
        name="document-chunks",
    ),
    path(f"{ASSISTANT}routing/", routing.RoutingGraphApi.as_view(), name="assistant-routing"),
    path(
        f"{ASSISTANT}routing-examples/",
        routing_examples.RoutingExampleCollectionApi.as_view(),
        name="routing-example-list",
    ),
    path(
        f"{ASSISTANT}routing-examples/<id:example_id>/",
        routing_examples.RoutingExampleDetailApi.as_view(),
        name="routing-example-detail",
    ),
    path(
        f"{ASSISTANT}routing-examples/<id:example_id>/accept/",
        routing_examples.RoutingExampleAcceptApi.as_view(),
        name="routing-example-accept",
    ),
    path(
        f"{ASSISTANT}routing-examples/<id:example_id>/reject/",
        routing_examples.RoutingExampleRejectApi.as_view(),
        name="routing-example-reject",
    ),
    path(
        f"{ASSISTANT}scenarios/<id:scenario_id>/draft-examples/",
        routing_examples.ScenarioDraftExamplesApi.as_view(),
        name="scenario-draft-examples",
    ),
    path(
        f"{ACCOUNT}conversations/<id:conversation_id>/routing-decisions/",
        routing.ConversationRoutingDecisionsApi.as_view(),
        name="conversation-routing-decisions",
    ),
    path(
        f"{ACCOUNT}conversations/<id:conversation_id>/reroute/",
        reroute.ConversationRerouteApi.as_view(),
        name="conversation-reroute",
    ),
    path(f"{ACCOUNT}credits/", credits.CreditUsageApi.as_view(), name="credits"),
    path(
        f"{ACCOUNT}model-endpoints/",
        model_endpoints.ModelEndpointCollectionApi.as_view(),
        name="model-endpoint-list",
    ),
    path(
        f"{ACCOUNT}model-endpoints/<id:endpoint_id>/",
        model_endpoints.ModelEndpointDetailApi.as_view(),
        name="model-endpoint-detail",
    ),
    path(f"{ACCOUNT}custom-tools/", custom_tools.CustomToolCollectionApi.as_view(), name="custom-tool-list"),
    path(
        f"{ACCOUNT}custom-tools/<id:tool_id>/",
        custom_tools.CustomToolDetailApi.as_view(),
        name="custom-tool-detail",
    ),
    path(
        f"{ACCOUNT}custom-tools/<id:tool_id>/test-call/",
        custom_tools.CustomToolTestCallApi.as_view(),
        name="custom-tool-test-call",
    ),
    path(
        f"{ACCOUNT}conversations/<id:conversation_id>/runs/",
        runs.ConversationRunsApi.as_view(),
        name="conversation-runs",
    ),
    path(
        f"{ASSISTANT}memory-variables/",
        memory.MemoryVariableCollectionApi.as_view(),
        name="memory-variable-list",
    ),
    path(
        f"{ASSISTANT}memory-variables/<id:variable_id>/",
        memory.MemoryVariableDetailApi.as_view(),
        name="memory-variable-detail",
    ),
    path(
        f"{ACCOUNT}conversations/<id:conversation_id>/memory/",
        memory.ConversationMemoryApi.as_view(),
        name="conversation-memory",
    ),
    path(
        f"{ACCOUNT}conversations/<id:conversation_id>/memory/<str:name>/",
        memory.ConversationMemoryNameApi.as_view(),
        name="conversation-memory-name",
    ),
    path(f"{ASSISTANT}shortcuts/", shortcuts.ShortcutCollectionApi.as_view(), name="shortcut-list"),
    path(
        f"{ASSISTANT}shortcuts/<id:shortcut_id>/",
        shortcuts.ShortcutDetailApi.as_view(),
        name="shortcut-detail",
    ),
    path(f"{ASSISTANT}eval-sets/", evaluation.EvalSetCollectionApi.as_view(), name="eval-set-list"),
    path(EVAL_SET, evaluation.EvalSetDetailApi.as_view(), name="eval-set-detail"),
    path(f"{EVAL_SET}questions/", evaluation.EvalQuestionCollectionApi.as_view(), name="eval-question-list"),
    path(
        f"{EVAL_SET}questions/import/",
        evaluation.EvalQuestionImportApi.as_view(),
        name="eval-question-import",
    ),
    path(
        f"{EVAL_SET}questions/draft/", evaluation.EvalQuestionDraftApi.as_view(), name="eval-question-draft"
    ),
    path(
        f"{EVAL_SET}questions/<id:question_id>/",
        evaluation.EvalQuestionDetailApi.as_view(),
        name="eval-question-detail",
    ),
    path(
        f"{EVAL_SET}questions/<id:question_id>/approve/",
        evaluation.EvalQuestionApproveApi.as_view(),
        name="eval-question-approve",
    ),
    path(f"{EVAL_SET}runs/", evaluation.EvalRunCollectionApi.as_view(), name="eval-run-list"),
    path(EVAL_RUN, evaluation.EvalRunDetailApi.as_view(), name="eval-run-detail"),
    path(
        f"{EVAL_RUN}answers/<id:answer_id>/mark/",
        evaluation.EvalAnswerMarkApi.as_view(),
        name="eval-answer-mark",
    ),
    path(
        f"{EVAL_RUN}compare/<id:other_run_id>/",
        evaluation.EvalRunCompareApi.as_view(),
        name="eval-run-compare",
    ),
]
