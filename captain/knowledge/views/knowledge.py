"""The knowledge page: an assistant's documents (status, progress, reason, passages), upload a file, import a
web page / sitemap / crawl, re-sync, delete (after a confirmation step), and read a document's passages.

Every write is a POST with the CSRF token that redirects back (post/redirect/get) with a flash message saying
what happened or why not. While a document is queued or processing the page reloads itself every two seconds
(a meta refresh, as the playground does); no script is needed. Uploads go through `CappedUploadHandler`, which
must be installed before the CSRF check reads the body: hence the csrf_exempt outer view that installs it and
the csrf_protect inner one.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods

from captain.assistants.models import Assistant
from captain.assistants.selectors import access_assistant
from captain.dashboard.choice import chosen_assistant
from captain.knowledge.models import KnowledgeDocument
from captain.knowledge.selectors import access_document, document_chunks, document_list
from captain.knowledge.services.knowledge import (
    URL_KINDS,
    document_create_upload,
    document_create_url,
    document_delete,
    document_resync,
)
from captain.knowledge.upload_limits import cap_uploads
from helpdesk.models import Membership
from helpdesk.views.base import account_view, frame_context

PASSAGES_SHOWN = 200
DOCUMENTS_SHOWN = 200
REFRESH_SECONDS = 2
BUSY = (KnowledgeDocument.Status.QUEUED, KnowledgeDocument.Status.PROCESSING)


class UploadForm(forms.Form):
    file = forms.FileField(allow_empty_file=True)


class ImportForm(forms.Form):
    kind = forms.ChoiceField(choices=[(k, KnowledgeDocument.Kind(k).label) for k in URL_KINDS])
    url = forms.CharField(max_length=2000, strip=True)
    max_pages = forms.IntegerField(required=False)
    max_depth = forms.IntegerField(required=False)
    sync_interval_hours = forms.IntegerField(required=False)


class DocumentForm(forms.Form):
    document = forms.IntegerField(min_value=1)


@csrf_exempt
@require_http_methods(["GET", "POST"])
def knowledge_page(request: HttpRequest, account_id: int) -> HttpResponse:
    cap_uploads(request)
    return _knowledge_page(request, account_id=account_id)


@csrf_protect
@account_view(admin_only=True)
def _knowledge_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    if request.method == "POST":
        return _post(request, membership)
    account_id = membership.account_id
    assistants, assistant = chosen_assistant(request, account_id)
    documents = list(document_list(assistant=assistant)[:DOCUMENTS_SHOWN]) if assistant else []
    shown = _document_param(request, assistant, "document")
    confirm = _document_param(request, assistant, "confirm_delete")
    context = frame_context(
        request,
        membership,
        assistants=assistants,
        assistant=assistant,
        documents=documents,
        shown=shown,
        passages=list(document_chunks(document=shown)[:PASSAGES_SHOWN]) if shown else [],
        passages_limit=PASSAGES_SHOWN,
        confirm=confirm,
        kinds=[(k, KnowledgeDocument.Kind(k).label) for k in URL_KINDS],
        refresh=REFRESH_SECONDS if any(d.status in BUSY for d in documents) and not confirm else 0,
    )
    return render(request, "captain/knowledge.html", context)


def _document_param(request: HttpRequest, assistant: Assistant | None, name: str) -> KnowledgeDocument | None:
    value = request.GET.get(name, "")
    if assistant is None or not value.isdigit():
        return None
    return access_document(assistant=assistant, document_id=int(value))


def _post(request: HttpRequest, membership: Membership) -> HttpResponse:
    wanted = request.POST.get("assistant", "")
    if not wanted.isdigit():
        messages.error(request, gettext("Choose an assistant."))
        return redirect(reverse("captain-dashboard:knowledge", args=[membership.account_id]))
    assistant = access_assistant(account_id=membership.account_id, assistant_id=int(wanted))
    back = f"{reverse('captain-dashboard:knowledge', args=[membership.account_id])}?assistant={assistant.pk}"
    action = request.POST.get("action", "")
    try:
        if action == "upload":
            _upload(request, assistant)
        elif action == "import":
            _import(request, assistant)
        elif action in ("resync", "delete"):
            form = DocumentForm(request.POST)
            if not form.is_valid():
                raise ValidationError(gettext("Choose a document."))
            document = access_document(assistant=assistant, document_id=form.cleaned_data["document"])
            if action == "resync":
                document_resync(document=document)
                messages.success(
                    request, gettext("“%(document)s” is queued for a re-sync.") % {"document": document}
                )
            else:
                document_delete(document=document)
                messages.success(
                    request, gettext("“%(document)s” and its passages were deleted.") % {"document": document}
                )
        else:
            raise ValidationError(gettext("Unknown action."))
    except ValidationError as exc:
        messages.error(request, _explained(exc))
    return redirect(back)


def _explained(exc: ValidationError) -> str:
    """The service's messages, each with the field it is about ("max_pages: Must be between 1 and 200.")."""
    if not hasattr(exc, "error_dict"):
        return " ".join(exc.messages)
    parts: list[str] = []
    for name, errors in exc.message_dict.items():
        label = "" if name in ("__all__", "non_field_errors") else f"{name.replace('_', ' ')}: "
        parts.extend(f"{label}{error}" for error in errors)
    return " ".join(parts)


def _upload(request: HttpRequest, assistant: Assistant) -> None:
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        raise ValidationError(gettext("Choose a file to upload."))
    upload = form.cleaned_data["file"]
    document = document_create_upload(
        assistant=assistant,
        file_name=upload.name or "",
        content_type=upload.content_type or "",
        data=upload,
        size=upload.size,
    )
    if document.status == KnowledgeDocument.Status.FAILED:
        messages.error(
            request,
            gettext("“%(document)s” was not accepted: %(reason)s")
            % {"document": document, "reason": document.status_reason},
        )
    else:
        messages.success(
            request, gettext("“%(document)s” is uploaded and queued for processing.") % {"document": document}
        )


def _import(request: HttpRequest, assistant: Assistant) -> None:
    form = ImportForm(request.POST)
    if not form.is_valid():
        raise ValidationError(
            [f"{name}: {' '.join(str(e) for e in errors)}" for name, errors in form.errors.items()]
        )
    data = form.cleaned_data
    document = document_create_url(
        assistant=assistant,
        kind=data["kind"],
        url=data["url"],
        max_pages=data["max_pages"],
        max_depth=data["max_depth"],
        sync_interval_hours=data["sync_interval_hours"] or 0,
    )
    messages.success(request, gettext("“%(url)s” is queued for import.") % {"url": document.source_url})
