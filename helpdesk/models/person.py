from django.conf import settings
from django.db import models


class Language(models.TextChoices):
    """The languages the dashboard and the fixed customer texts are written in (settings.LANGUAGES)."""

    ENGLISH = "en", "English"
    SIMPLIFIED_CHINESE = "zh-hans", "简体中文"


class PersonSettings(models.Model):
    """One person's own settings, the same in every account they belong to (a Membership is per account).

    Created on first write: a person without a row follows their browser's Accept-Language.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="person_settings"
    )
    language = models.CharField(
        max_length=16,
        choices=Language.choices,
        blank=True,
        help_text="The dashboard's language. Empty: the browser's language.",
    )

    class Meta:
        verbose_name = "person's settings"
        verbose_name_plural = "people's settings"

    def __str__(self) -> str:
        return f"{self.user} ({self.language or 'browser language'})"
