"""The playground page: chat with an assistant (or start at one scenario) and read each turn's debug log.

The transcript lives in the admin's session: a playground conversation is nobody's customer conversation. Each
message is answered by a worker (captain.playground.services.playground); while it runs, the page shows its progress and
reloads itself every second until the answer is there.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from captain.actions.selectors import shortcut_for_command, shortcut_list
from captain.actions.services.shortcuts import shortcut_command_text, shortcut_parameters
from captain.answering.selectors import spans_for_trace
from captain.answering.services.redaction import account_secrets
from captain.assistants.models import TRIAGE_KEY, Assistant
from captain.assistants.selectors import access_assistant, assistant_list
from captain.dashboard.trace_tree import agents_involved, scrub_spans, span_tree
from captain.playground.models import PlaygroundRun
from captain.playground.selectors import playground_run_for_account
from captain.playground.services.playground import playground_agents, playground_turn_request
from helpdesk.models import Membership
from helpdesk.views.base import account_view, frame_context

SESSION_KEY = "captain_playground"
MAX_TURNS_KEPT = 40
"""Messages kept in the session (user and AI together); older ones drop out of the window."""
MAX_MESSAGE_CHARS = 4000


class PlaygroundForm(forms.Form):
    assistant = forms.IntegerField(min_value=1)
    start_key = forms.CharField(max_length=64)
    message = forms.CharField(max_length=MAX_MESSAGE_CHARS, strip=True)


def _sessions(request: HttpRequest) -> dict[str, Any]:
    return request.session.setdefault(SESSION_KEY, {})


def _state(request: HttpRequest, account_id: int) -> dict[str, Any] | None:
    return request.session.get(SESSION_KEY, {}).get(str(account_id))


def _history(turns: list[dict[str, Any]]) -> list[dict[str, str]]:
    """What the model sees of earlier playground turns: the texts the customer would have seen."""
    return [{"role": t["role"], "content": t["content"]} for t in turns if t.get("content")]


@require_http_methods(["GET", "POST"])
@account_view(admin_only=True)
def playground_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    account_id = membership.account_id
    if request.method == "POST":
        return _post(request, membership)

    assistants = list(assistant_list(account_id=account_id))
    state = _state(request, account_id)
    wanted = request.GET.get("assistant", "")
    assistant: Assistant | None = None
    if wanted.isdigit():
        assistant = access_assistant(account_id=account_id, assistant_id=int(wanted))
    elif state:
        assistant = next((a for a in assistants if a.pk == state["assistant_id"]), None)
    assistant = assistant or (assistants[0] if assistants else None)
    if state and assistant and state["assistant_id"] != assistant.pk:
        state = None  # another assistant: a fresh conversation

    pending = _collect_pending(request, account_id, state)
    agents = playground_agents(assistant) if assistant else {}
    start_key = request.GET.get("start") or (state or {}).get("start_key") or TRIAGE_KEY
    start_key = start_key if start_key in agents else TRIAGE_KEY
    turns: list[dict[str, Any]] = (state or {}).get("turns", [])

    # The debug log of one AI turn (the latest by default); only trace ids of this session's transcript are
    # readable here, so the page cannot be used to read another run's spans.
    ai_turns = [t for t in turns if t["role"] == "assistant"]
    selected = request.GET.get("turn", "")
    shown = next((t for t in ai_turns if str(t.get("n")) == selected), ai_turns[-1] if ai_turns else None)
    roots = []
    if shown and shown.get("trace_id"):
        spans = spans_for_trace(trace_id=shown["trace_id"])
        # A tool's secret echoed by a service in its answer is removed here too, as in the debug log.
        roots = span_tree(scrub_spans(spans, account_secrets(membership.account_id)))
    context = frame_context(
        request,
        membership,
        assistants=assistants,
        assistant=assistant,
        agents=agents,
        start_key=start_key,
        turns=turns,
        shown=shown,
        roots=roots,
        agents_involved=agents_involved(roots),
        max_chars=MAX_MESSAGE_CHARS,
        pending=pending,
        shortcuts=_shortcuts(assistant) if assistant else [],
    )
    return render(request, "captain/playground.html", context)


def _post(request: HttpRequest, membership: Membership) -> HttpResponse:
    account_id = membership.account_id
    url = reverse("captain-dashboard:playground", args=[account_id])
    if "reset" in request.POST:
        _sessions(request).pop(str(account_id), None)
        request.session.modified = True
        return redirect(url)
    data = request.POST.copy()
    if request.POST.get("shortcut"):
        data["message"] = _shortcut_message(request, account_id)
    form = PlaygroundForm(data)
    if not form.is_valid():
        return redirect(url)
    assistant = access_assistant(account_id=account_id, assistant_id=form.cleaned_data["assistant"])
    state = _state(request, account_id)
    start_key = form.cleaned_data["start_key"]
    if not state or state["assistant_id"] != assistant.pk or state["start_key"] != start_key:
        state = {"assistant_id": assistant.pk, "start_key": start_key, "agent_key": start_key, "turns": []}
    turns: list[dict[str, Any]] = state["turns"]
    if state.get("pending"):
        return redirect(url)  # one message at a time: the previous one is still being answered
    message = form.cleaned_data["message"]
    run = playground_turn_request(
        assistant=assistant, start_key=state["agent_key"], history=_history(turns), message=message
    )
    n = (turns[-1]["n"] + 1) if turns else 1
    turns.append({"n": n, "role": "user", "content": message})
    state["turns"] = turns[-MAX_TURNS_KEPT:]
    state["pending"] = run.pk
    _sessions(request)[str(account_id)] = state
    request.session.modified = True
    return redirect(f"{url}?assistant={assistant.pk}&start={start_key}")


def _shortcuts(assistant: Assistant) -> list[dict[str, Any]]:
    """The assistant's enabled shortcuts, each with its parameter form, for the buttons above the message box."""
    return [
        {"command": s.command, "description": s.description, "parameters": shortcut_parameters(s)}
        for s in shortcut_list(assistant=assistant, enabled=True)
    ]


def _shortcut_message(request: HttpRequest, account_id: int) -> str:
    """The `/command value...` text a shortcut's form stands for: sent as the customer would type it, so the
    turn recognises it exactly as a channel message. Empty (no message) for an unknown command."""
    assistant_id = request.POST.get("assistant", "")
    if not assistant_id.isdigit():
        return ""
    assistant = access_assistant(account_id=account_id, assistant_id=int(assistant_id))
    shortcut = shortcut_for_command(assistant=assistant, command=request.POST["shortcut"])
    if shortcut is None:
        return ""
    values = {p["name"]: request.POST.get(f"param_{p['name']}", "") for p in shortcut_parameters(shortcut)}
    return shortcut_command_text(shortcut, values)


def _collect_pending(
    request: HttpRequest, account_id: int, state: dict[str, Any] | None
) -> PlaygroundRun | None:
    """The turn a worker is answering for this session: moved into the transcript once it is done, returned
    (for its progress) while it runs. Only the id this session stored is read, scoped to the account."""
    if not state or not state.get("pending"):
        return None
    run = playground_run_for_account(account_id=account_id, run_id=state["pending"])
    if run is None:  # pruned, or the assistant was deleted
        state.pop("pending")
        request.session.modified = True
        return None
    if run.status != PlaygroundRun.Status.DONE:
        return run
    turns: list[dict[str, Any]] = state["turns"]
    result = dict(run.result or {})
    result.pop("agent_names", None)
    text = result.pop("text", "")
    n = (turns[-1]["n"] + 1) if turns else 1
    turns.append({"n": n, "role": "assistant", "content": text, **result})
    state["turns"] = turns[-MAX_TURNS_KEPT:]
    # Sticky specialist, as in a real conversation: the agent that answered continues on the next message.
    state["agent_key"] = result.get("agent_key", state["agent_key"])
    state.pop("pending")
    request.session.modified = True
    return None
