from django.db import models

from .account import Account
from .message import Message


class Attachment(models.Model):
    """A file a customer sent (image, voice note...), fetched from the provider's API and kept in our storage.

    The channel's webhook only reports a reference (a Telegram file_id, a WhatsApp media id, a Slack file URL);
    the file is fetched afterwards, checked for size and type, and stored with Django's storage API.
    """

    class Kind(models.TextChoices):
        IMAGE = "image", "Image"
        AUDIO = "audio", "Voice note or audio"
        VIDEO = "video", "Video"
        FILE = "file", "File"

    class Status(models.TextChoices):
        PENDING = "pending", "Not fetched yet"
        STORED = "stored", "Stored"
        REFUSED = "refused", "Refused (size or type)"
        FAILED = "failed", "Could not be fetched"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="files")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    provider_ref = models.CharField(max_length=1000, help_text="The provider's id or URL of the file.")
    content_type = models.CharField(max_length=100, blank=True)
    size = models.PositiveIntegerField(default=0)
    file_name = models.CharField(max_length=255, blank=True)
    file = models.FileField(upload_to="attachments/%Y/%m/", blank=True)
    error = models.CharField(max_length=500, blank=True)
    transcript = models.TextField(
        blank=True, help_text="What a voice note says, when transcription is set up."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"
