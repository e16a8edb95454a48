"""Every Celery task of the AI team, registered for Celery's autodiscovery (which imports `captain.tasks`).

Each domain keeps its tasks in its own `tasks` module; their names stay `captain.tasks.<function>` (explicit
`name=`), as queued tasks and the beat schedule name them. Tasks take ids (never message bodies) and call one
service each.
"""

from captain.actions import tasks as actions_tasks
from captain.answering import tasks as answering_tasks
from captain.auto_resolve import tasks as auto_resolve_tasks
from captain.copilot import tasks as copilot_tasks
from captain.evaluation import tasks as evaluation_tasks
from captain.knowledge import tasks as knowledge_tasks
from captain.playground import tasks as playground_tasks
from captain.routing import tasks as routing_tasks

__all__ = [
    "actions_tasks",
    "answering_tasks",
    "auto_resolve_tasks",
    "copilot_tasks",
    "evaluation_tasks",
    "knowledge_tasks",
    "playground_tasks",
    "routing_tasks",
]
