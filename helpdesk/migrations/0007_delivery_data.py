"""Carry every outgoing message's outbox state from its `delivery_*` columns to a `Delivery` row.

Queued (in flight), sent and failed rows all move: in-flight ones so the task and the sweeper still find them,
sent ones because their provider ids answer later status webhooks, failed ones for the dashboard."""

from django.db import migrations

BATCH = 1000
FIELDS = {
    "status": "delivery_status",
    "attempts": "delivery_attempts",
    "error": "delivery_error",
    "enqueued_at": "delivery_enqueued_at",
    "lease_until": "delivery_lease_until",
    "provider_message_id": "delivery_provider_id",
    "created_at": "created_at",
}


def forward(apps, schema_editor):
    Message = apps.get_model("helpdesk", "Message")
    Delivery = apps.get_model("helpdesk", "Delivery")
    rows = (
        Message.objects.exclude(delivery_status="none")
        .filter(delivery__isnull=True)
        .order_by("pk")
        .values("pk", *FIELDS.values())
    )
    batch = []
    for row in rows.iterator(chunk_size=BATCH):
        batch.append(Delivery(message_id=row["pk"], **{new: row[old] for new, old in FIELDS.items()}))
        if len(batch) >= BATCH:
            Delivery.objects.bulk_create(batch)
            batch = []
    Delivery.objects.bulk_create(batch)


def backward(apps, schema_editor):
    Message = apps.get_model("helpdesk", "Message")
    Delivery = apps.get_model("helpdesk", "Delivery")
    for delivery in Delivery.objects.order_by("pk").iterator(chunk_size=BATCH):
        Message.objects.filter(pk=delivery.message_id).update(
            **{old: getattr(delivery, new) for new, old in FIELDS.items() if new != "created_at"}
        )
    Delivery.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("helpdesk", "0006_delivery")]

    operations = [migrations.RunPython(forward, backward)]
