"""Captain's dashboard pages (admins of the account only, but for the conversation page's re-route action), mounted
at the site root next to the dashboard."""

from django.urls import path

import helpdesk.ids  # noqa: F401  (registers the <id:...> path converter used below)
from captain.answering.views import debug_log, live, usage
from captain.copilot.views import copilot
from captain.evaluation.views import runs as evaluation_runs
from captain.evaluation.views import sets as evaluation_sets
from captain.knowledge.views import faq_review, knowledge
from captain.memory.views import memory
from captain.playground.views import playground
from captain.routing.views import routing_corrections

app_name = "captain-dashboard"

ACCOUNT = "app/accounts/<id:account_id>/"

urlpatterns = [
    path(
        f"{ACCOUNT}conversations/<id:conversation_id>/runs/",
        debug_log.conversation_runs_page,
        name="conversation-runs",
    ),
    # Server-sent events of a run in progress (thoughts, plan, tool events): for the two pages above.
    path(
        f"{ACCOUNT}conversations/<id:conversation_id>/live",
        live.conversation_live,
        name="conversation-live",
    ),
    path(f"{ACCOUNT}playground/", playground.playground_page, name="playground"),
    path(f"{ACCOUNT}playground/runs/<id:run_id>/live", live.playground_run_live, name="playground-run-live"),
    path(f"{ACCOUNT}usage/", usage.usage_page, name="usage"),
    path(f"{ACCOUNT}faq/", faq_review.faq_review_page, name="faq-review"),
    path(f"{ACCOUNT}knowledge/", knowledge.knowledge_page, name="knowledge"),
    path(f"{ACCOUNT}evaluation/", evaluation_sets.eval_sets_page, name="evaluation"),
    path(f"{ACCOUNT}evaluation/sets/<id:set_id>/", evaluation_sets.eval_set_page, name="evaluation-set"),
    path(f"{ACCOUNT}evaluation/runs/<id:run_id>/", evaluation_runs.eval_run_page, name="evaluation-run"),
    path(f"{ACCOUNT}evaluation/compare/", evaluation_runs.eval_compare_page, name="evaluation-compare"),
    path(
        f"{ACCOUNT}routing-corrections/",
        routing_corrections.routing_corrections_page,
        name="routing-corrections",
    ),
    # The conversation page's "This should have gone to ..." form (any member of the account).
    path(
        f"{ACCOUNT}conversations/<id:conversation_id>/reroute/",
        routing_corrections.conversation_reroute_action,
        name="conversation-reroute",
    ),
    # The conversation page's memory panel (any member of the account, as the agent writer).
    path(
        f"{ACCOUNT}conversations/<id:conversation_id>/memory/",
        memory.conversation_memory_action,
        name="conversation-memory",
    ),
    # The conversation page's copilot (any member of the account): start a run, its result, its live text.
    path(
        f"{ACCOUNT}conversations/<id:conversation_id>/copilot/", copilot.copilot_start, name="copilot-start"
    ),
    path(f"{ACCOUNT}copilot/runs/<id:run_id>/", copilot.copilot_run_status, name="copilot-run"),
    path(f"{ACCOUNT}copilot/runs/<id:run_id>/stream", copilot.copilot_run_stream, name="copilot-run-stream"),
]
