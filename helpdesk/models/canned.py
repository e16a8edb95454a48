from django.db import models

from .account import Account


class CannedResponse(models.Model):
    """A saved reply: agents type `/` and its short code in the composer to insert it."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="canned_responses")
    short_code = models.SlugField(max_length=64, allow_unicode=True)
    content = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["short_code"]
        constraints = [
            models.UniqueConstraint(fields=["account", "short_code"], name="canned_unique_short_code")
        ]

    def __str__(self) -> str:
        return f"/{self.short_code}"
