"""Carry the AI's job state of every customer message from helpdesk's `ai_*` columns to a `ReplyJob` row.

Pending messages move so the sweeper and the attempt counter still find them; done and skipped ones keep
their history. Runs before helpdesk drops the columns (`run_before`), so helpdesk never names captain."""

from django.db import migrations

BATCH = 1000


def forward(apps, schema_editor):
    Message = apps.get_model("helpdesk", "Message")
    ReplyJob = apps.get_model("captain", "ReplyJob")
    rows = (
        Message.objects.exclude(ai_status="none")
        .filter(reply_job__isnull=True)
        .order_by("pk")
        .values(
            "pk", "conversation_id", "account_id", "ai_status", "ai_attempts", "ai_enqueued_at", "created_at"
        )
    )
    batch = []
    for row in rows.iterator(chunk_size=BATCH):
        batch.append(
            ReplyJob(
                message_id=row["pk"],
                conversation_id=row["conversation_id"],
                account_id=row["account_id"],
                status=row["ai_status"],
                attempts=row["ai_attempts"],
                enqueued_at=row["ai_enqueued_at"],
                created_at=row["created_at"],
            )
        )
        if len(batch) >= BATCH:
            ReplyJob.objects.bulk_create(batch)
            batch = []
    ReplyJob.objects.bulk_create(batch)


def backward(apps, schema_editor):
    Message = apps.get_model("helpdesk", "Message")
    ReplyJob = apps.get_model("captain", "ReplyJob")
    for job in ReplyJob.objects.order_by("pk").iterator(chunk_size=BATCH):
        Message.objects.filter(pk=job.message_id).update(
            ai_status=job.status, ai_attempts=job.attempts, ai_enqueued_at=job.enqueued_at
        )
    ReplyJob.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("captain", "0006_reply_job"), ("helpdesk", "0007_delivery_data")]
    # helpdesk's next migration drops the columns read here.
    run_before = [("helpdesk", "0008_remove_message_outbox_and_ai_columns")]

    operations = [migrations.RunPython(forward, backward)]
