"""Admin form of FAQ pairs: it writes through the FAQ service."""

from __future__ import annotations

from django import forms

from captain.knowledge.models import FaqEntry
from captain.knowledge.services.faq import FAQ_ENTRY_FIELDS


class FaqEntryAdminForm(forms.ModelForm):
    class Meta:
        model = FaqEntry
        fields = ["assistant", *FAQ_ENTRY_FIELDS]
