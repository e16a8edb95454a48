"""Question sets, their runs and the answers each run gave (captain.evaluation)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from captain.assistants.models import Assistant
from helpdesk.models import Account


class EvalSet(models.Model):
    """A named set of test questions for one assistant."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="eval_sets")
    name = models.CharField(max_length=200)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return self.name


class EvalQuestion(models.Model):
    """One question of a set. A drafted question waits for an admin's approval: it is not run before."""

    class Origin(models.TextChoices):
        TYPED = "typed", "Typed"
        UPLOADED = "uploaded", "Uploaded"
        DRAFTED = "drafted", "Drafted from the documents"

    set = models.ForeignKey(EvalSet, on_delete=models.CASCADE, related_name="questions")
    position = models.PositiveIntegerField(default=0)
    question = models.TextField()
    previous = models.JSONField(default=list, blank=True)
    """Earlier turns of the conversation as chat messages ({role, content}): the question is a follow-up."""
    expected = models.TextField(blank=True)
    """What a right answer says, for the admin marking it (not given to the model)."""
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.TYPED)
    approved = models.BooleanField(default=True)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.question[:80]


class EvalRun(models.Model):
    """One pass of a set through the team, with the configuration it ran with (so two runs can be told apart)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    set = models.ForeignKey(EvalSet, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    label = models.CharField(max_length=200, blank=True)
    model_name = models.CharField(max_length=200, blank=True)
    """The endpoint and model the assistant answered with ("endpoint / model")."""
    knowledge_mode = models.CharField(max_length=32, blank=True)
    config_hash = models.CharField(max_length=64, blank=True)
    """Hash of the assistant's prompt-relevant fields and its scenarios: equal hashes, same configuration."""
    document_count = models.PositiveIntegerField(default=0)
    faq_count = models.PositiveIntegerField(default=0)
    question_count = models.PositiveIntegerField(default=0)
    answered_count = models.PositiveIntegerField(default=0)
    detail = models.TextField(blank=True)
    """Why a run failed."""
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"Run #{self.pk}{f' ({self.label})' if self.label else ''}"


class EvalAnswer(models.Model):
    """What the team answered to one question in one run, and the admin's mark."""

    class Verdict(models.TextChoices):
        VERIFIED = "verified", "Verified"
        REFUSED = "refused", "Refused"
        UNCHECKED = "unchecked", "Unchecked"
        ERROR = "error", "Error"

    class Mark(models.TextChoices):
        UNMARKED = "unmarked", "Not marked"
        RIGHT = "right", "Right"
        WRONG = "wrong", "Wrong"

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="answers")
    question = models.ForeignKey(EvalQuestion, on_delete=models.CASCADE, related_name="answers")
    reply = models.TextField(blank=True)
    outcome = models.CharField(max_length=32)
    """reply, handoff, resolve or error."""
    action = models.CharField(max_length=32, blank=True)
    """The knowledge step's action (answered, faq_answer, unknown, ...); empty without a knowledge step."""
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    detail = models.TextField(blank=True)
    sources = models.JSONField(default=list, blank=True)
    seconds = models.FloatField(default=0.0)
    mark = models.CharField(max_length=16, choices=Mark.choices, default=Mark.UNMARKED)
    marked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["question__position", "question_id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "question"], name="eval_answer_one_per_question"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.question_id}: {self.verdict}"
