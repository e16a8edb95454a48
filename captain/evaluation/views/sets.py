"""The "Test before launch" pages, part one: an assistant's question sets, and one set (add typed questions,
upload a CSV or JSONL file, draft questions from the documents and approve them, start a run, its runs).

Every write is a POST with the CSRF token that redirects back (post/redirect/get) with a flash message; no
script is needed. Administrators of the account only; another account's set is a 404.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods

from captain.assistants.selectors import access_assistant
from captain.dashboard.choice import chosen_assistant
from captain.evaluation.forms import (
    NewSetForm,
    QuestionForm,
    RunForm,
    TypedQuestionsForm,
    UploadQuestionsForm,
    form_errors,
)
from captain.evaluation.models import EvalSet
from captain.evaluation.selectors import (
    access_eval_question,
    access_eval_set,
    eval_question_counts,
    eval_questions,
    eval_runs,
    eval_set_list,
)
from captain.evaluation.services.drafts import eval_questions_draft_enqueue
from captain.evaluation.services.imports import MAX_FILE_BYTES
from captain.evaluation.services.runs import eval_run_start
from captain.evaluation.services.sets import (
    eval_question_approve,
    eval_question_delete,
    eval_questions_import,
    eval_questions_type,
    eval_set_create,
    eval_set_delete,
)
from helpdesk.models import Membership
from helpdesk.views.base import account_view, frame_context

RUNS_SHOWN = 50


@require_http_methods(["GET", "POST"])
@account_view(admin_only=True)
def eval_sets_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    account_id = membership.account_id
    if request.method == "POST":
        return _create_set(request, account_id)
    assistants, assistant = chosen_assistant(request, account_id)
    context = frame_context(
        request,
        membership,
        assistants=assistants,
        assistant=assistant,
        sets=list(eval_set_list(assistant=assistant)) if assistant else [],
    )
    return render(request, "captain/evaluation/sets.html", context)


def _create_set(request: HttpRequest, account_id: int) -> HttpResponse:
    assistant = access_assistant(account_id=account_id, assistant_id=_int(request.POST.get("assistant")))
    form = NewSetForm(request.POST)
    if not form.is_valid():
        messages.error(request, form_errors(form))
        return redirect(
            f"{reverse('captain-dashboard:evaluation', args=[account_id])}?assistant={assistant.pk}"
        )
    eval_set = eval_set_create(assistant=assistant, name=form.cleaned_data["name"])
    messages.success(request, _("“%(set)s” is created: add its questions.") % {"set": eval_set})
    return redirect(_set_url(eval_set))


def _int(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 0


def _set_url(eval_set: EvalSet) -> str:
    return reverse("captain-dashboard:evaluation-set", args=[eval_set.account_id, eval_set.pk])


@require_http_methods(["GET", "POST"])
@account_view(admin_only=True)
def eval_set_page(request: HttpRequest, membership: Membership, set_id: int) -> HttpResponse:
    eval_set = access_eval_set(account_id=membership.account_id, set_id=set_id)
    if request.method == "POST":
        return _post(request, eval_set)
    runs = list(eval_runs(eval_set=eval_set)[:RUNS_SHOWN])
    context = frame_context(
        request,
        membership,
        eval_set=eval_set,
        assistant=eval_set.assistant,
        questions=list(eval_questions(eval_set=eval_set)),
        counts=eval_question_counts(eval_set=eval_set),
        runs=runs,
        max_kib=MAX_FILE_BYTES // 1024,
        refresh=2 if any(r.status in ("queued", "running") for r in runs) else 0,
    )
    return render(request, "captain/evaluation/set.html", context)


def _post(request: HttpRequest, eval_set: EvalSet) -> HttpResponse:
    action = request.POST.get("action", "")
    try:
        if action == "type":
            form = TypedQuestionsForm(request.POST)
            if not form.is_valid():
                raise ValidationError(_("Type at least one question, one per line."))
            added = eval_questions_type(eval_set=eval_set, text=form.cleaned_data["text"])
            messages.success(
                request,
                ngettext("%(n)s question added.", "%(n)s questions added.", len(added)) % {"n": len(added)},
            )
        elif action == "upload":
            _upload(request, eval_set)
        elif action == "draft":
            eval_questions_draft_enqueue(eval_set=eval_set)
            messages.success(
                request, _("Drafting questions from the documents: they appear below to approve.")
            )
        elif action in ("approve", "delete"):
            _question_action(request, eval_set, action)
        elif action == "run":
            run_form = RunForm(request.POST)
            label = run_form.cleaned_data["label"] if run_form.is_valid() else ""
            run = eval_run_start(eval_set=eval_set, label=label)
            messages.success(request, _("%(run)s is queued: the answers appear as they come.") % {"run": run})
            return redirect(reverse("captain-dashboard:evaluation-run", args=[eval_set.account_id, run.pk]))
        elif action == "delete_set":
            eval_set_delete(eval_set=eval_set)
            messages.success(request, _("“%(set)s” and its runs were deleted.") % {"set": eval_set})
            return redirect(
                f"{reverse('captain-dashboard:evaluation', args=[eval_set.account_id])}?assistant={eval_set.assistant_id}"
            )
        else:
            raise ValidationError(_("Unknown action."))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect(_set_url(eval_set))


def _upload(request: HttpRequest, eval_set: EvalSet) -> None:
    form = UploadQuestionsForm(request.POST, request.FILES)
    if not form.is_valid():
        raise ValidationError(_("Choose a .csv or .jsonl file to upload."))
    upload = form.cleaned_data["file"]
    if upload.size > MAX_FILE_BYTES:  # refused before it is read into memory
        raise ValidationError(
            _("The file is %(size)s KiB; a question set may be at most %(max)s KiB.")
            % {"size": f"{upload.size / 1024:.0f}", "max": MAX_FILE_BYTES // 1024}
        )
    added = eval_questions_import(eval_set=eval_set, file_name=upload.name or "", data=upload.read())
    imported = ngettext(
        "%(n)s question imported from %(file)s.", "%(n)s questions imported from %(file)s.", len(added)
    )
    messages.success(request, imported % {"n": len(added), "file": upload.name})


def _question_action(request: HttpRequest, eval_set: EvalSet, action: str) -> None:
    form = QuestionForm(request.POST)
    if not form.is_valid():
        raise ValidationError(_("Choose a question."))
    question = access_eval_question(eval_set=eval_set, question_id=form.cleaned_data["question"])
    if action == "approve":
        eval_question_approve(question=question)
        messages.success(request, _("The question is approved: the next runs ask it."))
    else:
        eval_question_delete(question=question)
        messages.success(request, _("The question was deleted."))
