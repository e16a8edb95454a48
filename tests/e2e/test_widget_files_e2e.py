"""A website visitor's photo end to end with real parts: the real web server (gunicorn + uvicorn, ASGI) takes the
widget's multipart upload (3 MB, far over the server's 256 KiB request limit for JSON), checks and stores it; a
real Celery worker hands it to the AI through the normal pipeline, and the model (the scripted model server,
declared able to see images) gets the very photo as an image part of the visitor's message; the AI's reply is
in the visitor's thread."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from helpdesk.channels.widget import visitor_token
from helpdesk.models import Attachment, Inbox, Message
from tests.factories import AssistantInboxFactory, InboxFactory
from tests.support import fake_llm_server as fake
from tests.support.database import database_url_for_subprocess
from tests.support.fake_files import PNG
from tests.support.servers import WebServer, start_celery_worker, start_test_web_server, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PAGE = "http://127.0.0.1:8123"
MODEL = "fake-vision"
PHOTO = PNG + bytes(range(256)) * (3 * 4096)  # 3 MB: under the 4 MB a model is shown
SEEN = "I can see the scratch on the lamp."


@pytest.fixture
def stack(redis_url, tmp_path: Path) -> Iterator[tuple[WebServer, list[dict]]]:
    requests: list[dict] = []

    def model(request: dict) -> fake.Step:
        requests.append(request)
        return fake.text(SEEN)

    with fake.FakeLLMServer(responder=model) as llm:
        server = start_test_web_server(redis_url=redis_url, tmp_path=tmp_path)
        # The worker reads the stored photo where the web server wrote it (the same var folder).
        worker = start_celery_worker(
            env={
                "DATABASE_URL": database_url_for_subprocess(),
                "REDIS_URL": redis_url,
                "HELPDESK_VAR_DIR": str(tmp_path / "var"),
                "OPENAI_BASE_URL": llm.base_url,
                "OPENAI_API_KEY": "test",
                "CAPTAIN_MODEL": MODEL,
                "CAPTAIN_VISION_MODELS": MODEL,
                "CAPTAIN_LLM_TIMEOUT": "5",
                "CAPTAIN_LLM_MAX_RETRIES": "0",
                "CAPTAIN_DEBOUNCE_SECONDS": "0",
            },
            log_path=tmp_path / "worker.log",
        )
        try:
            yield server, requests
        finally:
            worker.stop()
            server.stop()


def test_a_visitors_photo_reaches_the_ai_through_the_real_server(stack):
    server, requests = stack
    inbox = InboxFactory(
        channel_type=Inbox.ChannelType.WIDGET, callback_url="", provider_config={"allowed_origins": PAGE}
    )
    AssistantInboxFactory(inbox=inbox, assistant__account=inbox.account)
    headers = {"Origin": PAGE, "X-Visitor-Token": visitor_token(inbox_id=inbox.pk, source_id="visitor:e2e")}
    base = f"{server.url}/widget/{inbox.webhook_token}"

    sent = httpx.post(
        f"{base}/files/",
        headers=headers,
        data={"id": "p1", "text": "The lamp came scratched"},
        files={"file": ("lamp.png", PHOTO, "image/png")},
        timeout=30,
    )

    assert sent.status_code == 201, sent.text
    assert sent.json()["ai_answering"] is True
    stored = Attachment.objects.get(message__inbox=inbox)
    assert (stored.status, stored.size, stored.content_type) == (
        Attachment.Status.STORED,
        len(PHOTO),
        "image/png",
    )
    wait_for(
        lambda: Message.objects.filter(
            inbox=inbox, message_type=Message.Type.OUTGOING, content=SEEN
        ).exists(),
        timeout=90,
        what="the AI's reply",
    )
    # The model got the visitor's words and the photo itself, as an image part of their message.
    parts = [
        part
        for request in requests
        for message in request["messages"]
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for part in message["content"]
    ]
    images = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    assert images and images[0] == "data:image/png;base64," + base64.b64encode(PHOTO).decode()
    assert any("The lamp came scratched" in json.dumps(p) for p in parts)
    thread = httpx.get(f"{base}/messages/", headers=headers, timeout=10).json()["messages"]
    assert [(m["incoming"], m["text"], [f["name"] for f in m["files"]]) for m in thread] == [
        (True, "The lamp came scratched", ["lamp.png"]),
        (False, SEEN, []),
    ]
