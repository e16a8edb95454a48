"""The copilot's live stream through its view (async, through the process' hub, on a real redis-server): an agent
watching a run sees the model's text piece by piece as the run generates it, then `end`; a finished run's
stream ends at once. The run is the real task body in a thread, asking the scripted model over real HTTP."""

from __future__ import annotations

import pytest

from captain.copilot.models import CopilotRun
from captain.copilot.tasks import copilot_generate
from helpdesk.models import Message
from tests.captain.answering.test_live_sse import data_of, fetch
from tests.factories import MessageFactory
from tests.support import fake_llm_server as fake

pytestmark = pytest.mark.django_db(transaction=True)

TEXT = "- The customer asks where order 1042 is.\n- Nobody answered yet."


def stream_url(acme, run: CopilotRun) -> str:
    return f"/app/accounts/{acme['account'].id}/copilot/runs/{run.pk}/stream"


def test_an_agent_sees_the_text_stream_in_pieces_then_the_end(client, acme):
    MessageFactory(conversation=acme["conversation"], content="Where is order 1042?")
    chunks = [TEXT[:15], TEXT[15:40], TEXT[40:]]
    acme["model"].push(fake.streamed(TEXT, chunks=chunks, delay=0.05))
    run = CopilotRun.objects.create(
        account=acme["account"],
        assistant=acme["assistant"],
        conversation=acme["conversation"],
        user=acme["agent"],  # a run streams to the person who asked for it
        kind="summary",
    )
    client.force_login(acme["agent"])

    response = fetch(client, stream_url(acme, run), during=lambda: copilot_generate.apply(args=(run.pk,)))

    assert response.status_code == 200 and response["Content-Type"] == "text/event-stream"
    received = [m for m in (data_of(f) for f in response.frames) if m is not None]
    assert [m["type"] for m in received] == ["thought"] * 3 + ["end"]
    assert [m["text"] for m in received[:3]] == chunks
    run.refresh_from_db()
    assert run.status == CopilotRun.Status.DONE and run.output == TEXT.strip()
    assert not Message.objects.filter(conversation=acme["conversation"], message_type="outgoing").exists()


def test_the_stream_of_a_finished_run_ends_at_once(client, acme):
    run = CopilotRun.objects.create(
        account=acme["account"],
        assistant=acme["assistant"],
        conversation=acme["conversation"],
        user=acme["agent"],  # a run streams to the person who asked for it
        kind="draft",
        status="failed",
        error="The AI model did not answer.",
    )
    client.force_login(acme["agent"])
    response = fetch(client, stream_url(acme, run))
    received = [m for m in (data_of(f) for f in response.frames) if m is not None]
    assert [m["type"] for m in received] == ["end"]
