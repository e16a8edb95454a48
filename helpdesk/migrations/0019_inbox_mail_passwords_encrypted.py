"""E-mail inboxes' SMTP and IMAP passwords encrypted at rest (helpdesk.crypto). An e-mail inbox's password was
its access token (both SMTP and IMAP logged in with it): it moves, encrypted, to the SMTP password, which IMAP
uses while no IMAP password of its own is set, and the plain column is emptied. Reversible."""

from django.db import migrations, models

from helpdesk.crypto import secret_decrypt, secret_encrypt


def passwords_encrypt(apps, schema_editor):
    Inbox = apps.get_model("helpdesk", "Inbox")
    for inbox in Inbox.objects.filter(channel_type="email").exclude(access_token=""):
        inbox.smtp_password_encrypted = secret_encrypt(inbox.access_token)
        inbox.access_token = ""
        inbox.save(update_fields=["smtp_password_encrypted", "access_token"])


def passwords_decrypt(apps, schema_editor):
    Inbox = apps.get_model("helpdesk", "Inbox")
    for inbox in Inbox.objects.filter(channel_type="email").exclude(smtp_password_encrypted=""):
        inbox.access_token = secret_decrypt(inbox.smtp_password_encrypted)
        inbox.save(update_fields=["access_token"])


class Migration(migrations.Migration):
    dependencies = [("helpdesk", "0018_message_fulltext")]

    operations = [
        migrations.AddField(
            model_name="inbox",
            name="smtp_password_encrypted",
            field=models.TextField(blank=True, default="", editable=False),
        ),
        migrations.AddField(
            model_name="inbox",
            name="imap_password_encrypted",
            field=models.TextField(blank=True, default="", editable=False),
        ),
        migrations.RunPython(passwords_encrypt, passwords_decrypt),
    ]
