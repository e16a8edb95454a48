from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from .account import Account
from .conversation import Conversation


class CsatResponse(models.Model):
    """A customer's rating of a resolved conversation (1-5) and an optional comment (helpdesk.services.csat)."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    conversation = models.OneToOneField(Conversation, on_delete=models.CASCADE, related_name="csat")
    rating = models.PositiveSmallIntegerField(validators=[MinValueValidator(1), MaxValueValidator(5)])
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "CSAT response"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(rating__gte=1, rating__lte=5), name="csat_rating_1_to_5"
            )
        ]
        indexes = [models.Index(fields=["account", "created_at"], name="csat_account_created_idx")]

    def __str__(self) -> str:
        return f"{self.rating}/5 for conversation {self.conversation_id}"
