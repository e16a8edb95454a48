"""Celery task names are what the broker holds: a task queued before a deploy is run by name after it. Moving a
task's code between modules must not rename it, so every captain task carries an explicit `name=`."""

from __future__ import annotations

from config.celery import app

REGISTERED = {
    "captain.tasks.assistant_prompt_warm",
    "captain.tasks.auto_resolve_judge",
    "captain.tasks.copilot_generate",
    "captain.tasks.draft_routing_examples",
    "captain.tasks.eval_questions_draft",
    "captain.tasks.eval_run",
    "captain.tasks.faq_drafts_conversations_sweep",
    "captain.tasks.faq_drafts_from_conversation",
    "captain.tasks.faq_drafts_from_document",
    "captain.tasks.knowledge_document_process",
    "captain.tasks.knowledge_resync_due",
    "captain.tasks.pending_messages_sweep",
    "captain.tasks.playground_turn",
    "captain.tasks.prompt_prefixes_warm",
    "captain.tasks.reply_generate",
    "captain.tasks.reply_suggestions_send",
    "captain.tasks.routing_drafts_check",
    "captain.tasks.routing_example_drafts_sweep",
    "captain.tasks.span_retention_sweep",
    "captain.tasks.sync_telegram_commands",
}


def test_captain_task_names_stay_as_registered() -> None:
    app.loader.import_default_modules()  # what a worker does at start: autodiscover every app's tasks
    assert {name for name in app.tasks if name.startswith("captain.")} == REGISTERED


def test_the_beat_schedule_names_registered_tasks() -> None:
    app.loader.import_default_modules()
    scheduled = {entry["task"] for entry in app.conf.beat_schedule.values()}
    assert scheduled <= set(app.tasks), scheduled - set(app.tasks)


def test_every_task_a_service_queues_by_name_is_registered() -> None:
    """Services queue tasks by name (captain.queue.task): a misspelt name fails here, not in production."""
    import re
    from pathlib import Path

    import captain

    root = Path(captain.__file__).parent
    named = {
        name
        for path in root.rglob("*.py")
        for name in re.findall(r"\btask\(\"([\w.]+)\"\)", path.read_text())
    }
    # copilot, playground, auto-resolve, documents, two FAQ drafts, examples, shortcuts
    assert len(named) >= 8
    app.loader.import_default_modules()
    assert named <= REGISTERED, named - REGISTERED
