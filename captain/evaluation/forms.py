"""Forms of the evaluation pages: each POST of a page is one of these, checked before any service runs."""

from __future__ import annotations

from django import forms

from captain.evaluation.models import EvalAnswer


class NewSetForm(forms.Form):
    name = forms.CharField(max_length=200, strip=True)


class TypedQuestionsForm(forms.Form):
    text = forms.CharField(strip=True, max_length=200_000)


class UploadQuestionsForm(forms.Form):
    file = forms.FileField(allow_empty_file=True)


class QuestionForm(forms.Form):
    question = forms.IntegerField(min_value=1)


class RunForm(forms.Form):
    label = forms.CharField(max_length=200, strip=True, required=False)


class MarkForm(forms.Form):
    answer = forms.IntegerField(min_value=1)
    mark = forms.ChoiceField(choices=EvalAnswer.Mark.choices)
    note = forms.CharField(max_length=2000, strip=True, required=False)


def form_errors(form: forms.Form) -> str:
    """The form's errors as one sentence for a flash message."""
    return " ".join(f"{name}: {' '.join(str(e) for e in errors)}" for name, errors in form.errors.items())
