"""Serializers of the evaluation API (question sets, questions, runs, answers, comparisons)."""

from __future__ import annotations

from rest_framework import serializers

from captain.evaluation.models import EvalAnswer, EvalQuestion, EvalRun, EvalSet
from captain.evaluation.services.imports import MAX_FILE_BYTES, MAX_QUESTIONS


class EvalSetOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = EvalSet
        ref_name = "EvalSet"
        fields = ["id", "assistant", "name", "created"]
        read_only_fields = fields


class EvalSetInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)

    class Meta:
        ref_name = "EvalSetInput"


class EvalQuestionOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = EvalQuestion
        ref_name = "EvalQuestion"
        fields = ["id", "position", "question", "expected", "previous", "origin", "approved"]
        read_only_fields = fields


class EvalQuestionsAddedSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="How many questions were added.")
    questions = EvalQuestionOutputSerializer(many=True)

    class Meta:
        ref_name = "EvalQuestionsAdded"


class EvalTurnSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["user", "assistant"])
    content = serializers.CharField(allow_blank=True)

    class Meta:
        ref_name = "EvalTurn"


class EvalQuestionInputSerializer(serializers.Serializer):
    question = serializers.CharField(max_length=4000)
    expected = serializers.CharField(max_length=10_000, required=False, allow_blank=True, default="")
    previous = EvalTurnSerializer(many=True, required=False, default=list)

    class Meta:
        ref_name = "EvalQuestionInput"


class EvalQuestionsAddSerializer(serializers.Serializer):
    questions = EvalQuestionInputSerializer(many=True, allow_empty=False, max_length=MAX_QUESTIONS)

    class Meta:
        ref_name = "EvalQuestionsAdd"


class EvalImportSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=["csv", "jsonl"], help_text="How `content` is written.")
    content = serializers.CharField(
        max_length=MAX_FILE_BYTES, help_text="The file's text: CSV with a `question` header, or JSON Lines."
    )

    class Meta:
        ref_name = "EvalImport"


class EvalRunStartSerializer(serializers.Serializer):
    label = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")

    class Meta:
        ref_name = "EvalRunStart"


RUN_FIELDS = [
    "id",
    "set",
    "status",
    "label",
    "model_name",
    "knowledge_mode",
    "config_hash",
    "document_count",
    "faq_count",
    "question_count",
    "answered_count",
    "detail",
    "created",
    "started",
    "finished",
]


class EvalRunOutputSerializer(serializers.ModelSerializer):
    # Text, not an enum: "status" enums of other models already take the schema's plain names.
    status = serializers.CharField(read_only=True, help_text="queued, running, done or failed.")

    class Meta:
        model = EvalRun
        ref_name = "EvalRun"
        fields = RUN_FIELDS
        read_only_fields = fields


class EvalAnswerOutputSerializer(serializers.ModelSerializer):
    question_text = serializers.CharField(source="question.question", read_only=True)
    expected = serializers.CharField(source="question.expected", read_only=True)
    sources = serializers.ListField(child=serializers.DictField(), read_only=True)

    class Meta:
        model = EvalAnswer
        ref_name = "EvalAnswer"
        fields = [
            "id",
            "question",
            "question_text",
            "expected",
            "reply",
            "outcome",
            "action",
            "verdict",
            "detail",
            "sources",
            "seconds",
            "mark",
            "marked_by",
            "note",
        ]
        read_only_fields = fields


class EvalTotalsSerializer(serializers.Serializer):
    answered = serializers.IntegerField()
    verified = serializers.IntegerField()
    refused = serializers.IntegerField()
    unchecked = serializers.IntegerField()
    errors = serializers.IntegerField()
    right = serializers.IntegerField()
    wrong = serializers.IntegerField()

    class Meta:
        ref_name = "EvalTotals"


class EvalRunDetailSerializer(EvalRunOutputSerializer):
    status = serializers.CharField(read_only=True, help_text="queued, running, done or failed.")
    answers = EvalAnswerOutputSerializer(many=True, read_only=True)
    totals = EvalTotalsSerializer(read_only=True)

    class Meta:
        model = EvalRun
        ref_name = "EvalRunDetail"
        fields = [*RUN_FIELDS, "answers", "totals"]
        read_only_fields = fields


class EvalMarkSerializer(serializers.Serializer):
    mark = serializers.ChoiceField(choices=EvalAnswer.Mark.values)
    note = serializers.CharField(max_length=2000, required=False, allow_blank=True)

    class Meta:
        ref_name = "EvalMark"


class EvalComparedSerializer(serializers.Serializer):
    question = EvalQuestionOutputSerializer()
    left = EvalAnswerOutputSerializer(allow_null=True)
    right = EvalAnswerOutputSerializer(allow_null=True)
    changes = serializers.ListField(
        child=serializers.CharField(), help_text="answer, verdict, mark, answered"
    )

    class Meta:
        ref_name = "EvalCompared"


class EvalCompareSerializer(serializers.Serializer):
    left = EvalRunOutputSerializer()
    right = EvalRunOutputSerializer()
    questions = EvalComparedSerializer(many=True)

    class Meta:
        ref_name = "EvalCompare"
