"""The FAQ review page: per assistant, the drafts the model wrote (pending, first), each with its source (a
document's title, or a link to the conversation), to approve as written, edit and approve, or reject; checkboxes
for approving or rejecting many at once; and tabs for the approved and rejected entries. Plain forms posted back
here with CSRF, then a redirect (so a reload never posts twice); the writes are captain.knowledge.services.faq's."""

from __future__ import annotations

from urllib.parse import urlencode

from django import forms
from django.contrib import messages as flash
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_http_methods

from captain.assistants.selectors import access_assistant
from captain.dashboard.choice import chosen_assistant
from captain.knowledge.models import FaqEntry, KnowledgeDocument
from captain.knowledge.selectors import (
    access_document,
    access_faq_entry,
    document_list,
    faq_entries_for_review,
    faq_entry_counts,
)
from captain.knowledge.services.faq import faq_entries_review, faq_entry_approve, faq_entry_reject
from captain.knowledge.services.faq_drafts import (
    faq_draft_conversation_problem,
    faq_drafts_conversation_enqueue,
    faq_drafts_document_enqueue,
)
from helpdesk.models import Membership
from helpdesk.selectors import access_conversation
from helpdesk.views.base import account_view, frame_context

PAGE_SIZE = 50
TABS = [
    (FaqEntry.Status.PENDING, gettext_lazy("Pending review")),
    (FaqEntry.Status.APPROVED, gettext_lazy("Approved")),
    (FaqEntry.Status.REJECTED, gettext_lazy("Rejected")),
]


class EntryActionForm(forms.Form):
    assistant = forms.IntegerField(min_value=1)
    op = forms.ChoiceField(choices=[("approve", "approve"), ("reject", "reject"), ("edit", "edit")])
    entry = forms.IntegerField(min_value=1)
    question = forms.CharField(max_length=2000, required=False, strip=True)
    answer = forms.CharField(max_length=10_000, required=False, strip=True)


class BulkActionForm(forms.Form):
    assistant = forms.IntegerField(min_value=1)
    action = forms.ChoiceField(choices=[("approve", "approve"), ("reject", "reject")])

    def clean(self) -> dict[str, object]:
        cleaned = super().clean() or {}
        # Any id is accepted here: the service keeps only the assistant's own entries.
        ids = [int(v) for v in self.data.getlist("ids") if str(v).isdigit()][:1000]  # type: ignore[attr-defined]
        if not ids:
            raise ValidationError(gettext("Select at least one entry."))
        cleaned["ids"] = ids
        return cleaned


def _page_url(account_id: int, assistant_id: int | None, status: str) -> str:
    query = {"status": status, **({"assistant": assistant_id} if assistant_id else {})}
    return f"{reverse('captain-dashboard:faq-review', args=[account_id])}?{urlencode(query)}"


def _errors(form: forms.Form) -> str:
    parts = []
    for name, errs in form.errors.items():
        text = " ".join(str(e) for e in errs)
        parts.append(text if name == "__all__" else f"{name}: {text}")
    return "; ".join(parts)


class DraftForm(forms.Form):
    assistant = forms.IntegerField(min_value=1)
    op = forms.ChoiceField(choices=[("draft_document", "document"), ("draft_conversation", "conversation")])
    document = forms.IntegerField(min_value=1, required=False)
    conversation = forms.IntegerField(min_value=1, required=False)


def _draft(request: HttpRequest, membership: Membership, status: str) -> HttpResponse:
    """Queue drafting from one of the assistant's ready documents or from a resolved conversation; the
    reason is shown when there is nothing to draft from."""
    account_id = membership.account_id
    form = DraftForm(request.POST)
    if not form.is_valid():
        flash.error(request, gettext("Nothing queued: %(reason)s") % {"reason": _errors(form)})
        return redirect(_page_url(account_id, None, status))
    assistant = access_assistant(account_id=account_id, assistant_id=form.cleaned_data["assistant"])
    if form.cleaned_data["op"] == "draft_document":
        document = access_document(assistant=assistant, document_id=form.cleaned_data["document"] or 0)
        if document.status != KnowledgeDocument.Status.READY:
            flash.error(
                request,
                gettext("Nothing queued: the document is %(status)s, not ready.")
                % {"status": document.status},
            )
        else:
            faq_drafts_document_enqueue(document_id=document.pk)
            flash.success(
                request,
                gettext("Drafting from %(document)s: drafts appear here.")
                % {"document": repr(document.title or document.file_name)},
            )
    else:
        conversation = access_conversation(
            account_id=account_id, conversation_id=form.cleaned_data["conversation"] or 0
        )
        problem = faq_draft_conversation_problem(conversation=conversation)
        if problem:
            flash.error(request, gettext("Nothing queued: %(reason)s") % {"reason": problem})
        else:
            faq_drafts_conversation_enqueue(conversation_id=conversation.pk)
            flash.success(
                request,
                gettext("Drafting from conversation #%(number)s: the draft appears here.")
                % {"number": conversation.pk},
            )
    return redirect(_page_url(account_id, assistant.pk, status))


def _post(request: HttpRequest, membership: Membership) -> HttpResponse:
    account_id = membership.account_id
    status = request.POST.get("status", FaqEntry.Status.PENDING)
    status = status if status in FaqEntry.Status.values else FaqEntry.Status.PENDING
    form: forms.Form
    if request.POST.get("op") in ("draft_document", "draft_conversation"):
        return _draft(request, membership, status)
    if request.POST.get("op") == "bulk":
        form = BulkActionForm(request.POST)
        if not form.is_valid():
            flash.error(request, gettext("Nothing changed: %(reason)s") % {"reason": _errors(form)})
            assistant_id = request.POST.get("assistant", "")
            return redirect(
                _page_url(account_id, int(assistant_id) if assistant_id.isdigit() else None, status)
            )
        assistant = access_assistant(account_id=account_id, assistant_id=form.cleaned_data["assistant"])
        action = form.cleaned_data["action"]
        changed = faq_entries_review(assistant=assistant, ids=form.cleaned_data["ids"], action=action)
        done = (
            gettext("%(count)s entries approved.")
            if action == "approve"
            else gettext("%(count)s entries rejected.")
        )
        flash.success(request, done % {"count": changed})
        return redirect(_page_url(account_id, assistant.pk, status))

    form = EntryActionForm(request.POST)
    if not form.is_valid():
        flash.error(request, gettext("Nothing changed: %(reason)s") % {"reason": _errors(form)})
        return redirect(_page_url(account_id, None, status))
    assistant = access_assistant(account_id=account_id, assistant_id=form.cleaned_data["assistant"])
    entry = access_faq_entry(assistant=assistant, faq_entry_id=form.cleaned_data["entry"])
    op = form.cleaned_data["op"]
    if op == "reject":
        faq_entry_reject(entry=entry)
        flash.success(request, gettext("Rejected: %(question)s") % {"question": entry.question[:80]})
    else:
        edits = {}
        if op == "edit":
            edits = {"question": form.cleaned_data["question"], "answer": form.cleaned_data["answer"]}
        try:
            faq_entry_approve(entry=entry, **edits)
        except ValidationError as exc:
            flash.error(request, gettext("Nothing changed: %(reason)s") % {"reason": " ".join(exc.messages)})
            return redirect(_page_url(account_id, assistant.pk, status))
        flash.success(request, gettext("Approved: %(question)s") % {"question": entry.question[:80]})
    return redirect(_page_url(account_id, assistant.pk, status))


@require_http_methods(["GET", "POST"])
@account_view(admin_only=True)
def faq_review_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    if request.method == "POST":
        return _post(request, membership)
    account_id = membership.account_id
    assistants, assistant = chosen_assistant(request, account_id)
    status = request.GET.get("status", FaqEntry.Status.PENDING)
    status = status if status in FaqEntry.Status.values else FaqEntry.Status.PENDING
    tabs, page, documents = [], None, []
    if assistant is not None:
        counts = faq_entry_counts(assistant=assistant)
        tabs = [
            {"status": s, "title": t, "count": counts[s], "url": _page_url(account_id, assistant.pk, s)}
            for s, t in TABS
        ]
        rows = faq_entries_for_review(assistant=assistant, status=status)
        page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
        documents = list(document_list(assistant=assistant, status=KnowledgeDocument.Status.READY)[:200])
    context = frame_context(
        request,
        membership,
        assistants=assistants,
        assistant=assistant,
        status=status,
        tabs=tabs,
        page=page,
        documents=documents,
    )
    return render(request, "captain/faq_review.html", context)
