"""The "Test before launch" pages, part two: one run (each question's answer, sources, verdict and the admin's
right/wrong mark, with totals) and two runs of a set side by side with their differences.

Marks are POST forms (no script needed); while the run is queued or running the page reloads itself every two
seconds, as the knowledge page does. Administrators only; another account's run is a 404.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from captain.evaluation.forms import MarkForm, form_errors
from captain.evaluation.selectors import (
    access_eval_answer,
    access_eval_run,
    eval_answers,
    eval_run_totals,
    eval_runs,
    eval_runs_compare,
)
from captain.evaluation.services.runs import eval_answer_mark
from helpdesk.models import Membership
from helpdesk.views.base import account_view, frame_context

REFRESH_SECONDS = 2


@require_http_methods(["GET", "POST"])
@account_view(admin_only=True)
def eval_run_page(request: HttpRequest, membership: Membership, run_id: int) -> HttpResponse:
    run = access_eval_run(account_id=membership.account_id, run_id=run_id)
    url = reverse("captain-dashboard:evaluation-run", args=[membership.account_id, run.pk])
    if request.method == "POST":
        form = MarkForm(request.POST)
        if not form.is_valid():
            messages.error(request, form_errors(form))
            return redirect(url)
        answer = access_eval_answer(run=run, answer_id=form.cleaned_data["answer"])
        eval_answer_mark(
            answer=answer,
            mark=form.cleaned_data["mark"],
            user_id=request.user.pk,
            note=form.cleaned_data["note"] if "note" in request.POST else None,
        )
        return redirect(f"{url}#answer-{answer.pk}")
    others = [r for r in eval_runs(eval_set=run.set) if r.pk != run.pk]
    context = frame_context(
        request,
        membership,
        run=run,
        eval_set=run.set,
        answers=list(eval_answers(run=run)),
        totals=eval_run_totals(run=run),
        others=others,
        refresh=REFRESH_SECONDS if run.status in ("queued", "running") else 0,
    )
    return render(request, "captain/evaluation/run.html", context)


@require_http_methods(["GET"])
@account_view(admin_only=True)
def eval_compare_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    """`?left=<run>&right=<run>`: two runs of one set."""
    ids = [request.GET.get("left", ""), request.GET.get("right", "")]
    if not all(i.isdigit() for i in ids):
        raise Http404("Choose two runs.")
    left, right = (access_eval_run(account_id=membership.account_id, run_id=int(i)) for i in ids)
    rows = eval_runs_compare(left=left, right=right)
    context = frame_context(
        request,
        membership,
        left=left,
        right=right,
        eval_set=left.set,
        rows=rows,
        changed=sum(1 for r in rows if r.changed),
        left_totals=eval_run_totals(run=left),
        right_totals=eval_run_totals(run=right),
    )
    return render(request, "captain/evaluation/compare.html", context)
