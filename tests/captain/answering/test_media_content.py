"""What the model reads of customers' files: images as `image_url` parts for a vision model (seen in the scripted
model server's request log), a statement it cannot miss for any other model, voice notes as their transcript
(from a fake OpenAI-compatible transcription server on 127.0.0.1) or a statement that it cannot hear them."""

from __future__ import annotations

import base64
import email
import email.policy
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from captain.answering.services.media_content import (
    IMAGE_NOT_RECEIVED,
    IMAGE_UNSEEN,
    VOICE_TRANSCRIPT,
    VOICE_UNHEARD,
)
from captain.answering.services.runs import chat_history
from captain.assistants.models import ModelEndpoint
from captain.assistants.services.model_endpoints import endpoint_for
from captain.runtime import Agent, OpenAIChatModel, RunContext, Runner, make_openai_client
from helpdesk.models import Attachment, Inbox, Message
from tests.factories import ConversationFactory, InboxFactory, MessageFactory
from tests.support.fake_files import JPEG, OGG_OPUS, PNG, FakeFileHost
from tests.support.fake_llm_server import FakeLLMServer, text

pytestmark = pytest.mark.django_db

VISION_MODEL = "vision-model"
TEXT_MODEL = "text-model"


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    settings.CAPTAIN = {**settings.CAPTAIN, "MEDIA_WAIT_SECONDS": 5.0}
    return tmp_path


@pytest.fixture
def llm():
    with FakeLLMServer() as server:
        yield server


def stored(message: Message, data: bytes, *, kind: str, content_type: str) -> Attachment:
    name = default_storage.save(f"attachments/{message.account_id}/s3cret.bin", ContentFile(data))
    return Attachment.objects.create(
        account_id=message.account_id,
        message=message,
        kind=kind,
        status=Attachment.Status.STORED,
        provider_ref="ref",
        content_type=content_type,
        size=len(data),
        file=name,
    )


def customer_message(content: str = "[photo]", **fields: Any) -> Message:
    conversation = fields.pop("conversation", None) or ConversationFactory()
    return MessageFactory(
        conversation=conversation, content=content, attachments=[{"type": "photo", "file_id": "x"}], **fields
    )


def ask_model(server: FakeLLMServer, history: list[dict[str, Any]], model: str) -> dict[str, Any]:
    """Run one agent over `history` against the scripted server; the request body it received."""
    server.push(text("Thanks, I will look into it."))
    runner = Runner(OpenAIChatModel(make_openai_client(server.base_url, None, 5.0, 0)))
    agent = Agent(key="triage", name="Captain", instructions="Help the customer.", model=model)
    runner.run(agents={"triage": agent}, start_key="triage", messages=history, context=RunContext(1, None))
    return server.requests[-1]


def image_parts(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part
        for message in request["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]


# ---- which models see images ---------------------------------------------------------------------------------


def test_operator_endpoints_declare_vision_models(settings):
    settings.CAPTAIN = {
        **settings.CAPTAIN,
        "MODEL_ENDPOINTS": {
            "main": {
                "base_url": "http://127.0.0.1:9/v1",
                "models": [VISION_MODEL, TEXT_MODEL],
                "vision": [VISION_MODEL],
            }
        },
    }
    endpoint = endpoint_for(account_id=1, name="main")
    assert endpoint.sees_images(VISION_MODEL) is True
    assert endpoint.sees_images(TEXT_MODEL) is False


def test_operator_vision_list_must_name_models(settings):
    settings.CAPTAIN = {
        **settings.CAPTAIN,
        "MODEL_ENDPOINTS": {"main": {"base_url": "http://127.0.0.1:9/v1", "vision": "gpt-4o"}},
    }
    with pytest.raises(ValueError, match="'vision' must list"):
        endpoint_for(account_id=1, name="main")


def test_own_endpoints_use_their_vision_models():
    message = customer_message()
    ModelEndpoint.objects.create(
        account_id=message.account_id,
        name="mine",
        base_url="https://llm.example/v1",
        model_names=[VISION_MODEL, TEXT_MODEL],
        vision_models=[VISION_MODEL],
    )
    endpoint = endpoint_for(account_id=message.account_id, name="mine")
    assert (endpoint.sees_images(VISION_MODEL), endpoint.sees_images(TEXT_MODEL)) == (True, False)


# ---- images -----------------------------------------------------------------------------------------------------


def test_a_vision_model_receives_the_image_as_an_image_url_part(llm):
    message = customer_message("The box arrived damaged")
    stored(message, PNG, kind="image", content_type="image/png")

    history = chat_history(message.conversation, batch_ids=[message.pk], sees_images=True)
    request = ask_model(llm, history, VISION_MODEL)

    expected = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert image_parts(request) == [{"type": "image_url", "image_url": {"url": expected}}]
    last = request["messages"][-1]
    assert last["role"] == "user"
    assert last["content"][0] == {"type": "text", "text": "The box arrived damaged"}


def test_a_model_that_cannot_see_is_told_so_and_gets_no_image(llm):
    message = customer_message("The box arrived damaged")
    stored(message, JPEG, kind="image", content_type="image/jpeg")

    history = chat_history(message.conversation, batch_ids=[message.pk], sees_images=False)
    request = ask_model(llm, history, TEXT_MODEL)

    assert image_parts(request) == []
    body = json.dumps(request)
    assert "base64" not in body and "image_url" not in body
    assert request["messages"][-1]["content"] == f"The box arrived damaged\n{IMAGE_UNSEEN}"


def test_without_the_keyword_the_history_is_the_stored_text_only():
    message = customer_message("The box arrived damaged")
    stored(message, JPEG, kind="image", content_type="image/jpeg")

    assert chat_history(message.conversation, batch_ids=[message.pk]) == [
        {"role": "user", "content": "The box arrived damaged"}
    ]


def test_images_of_earlier_turns_are_not_sent_again(llm):
    earlier = customer_message("first photo")
    stored(earlier, JPEG, kind="image", content_type="image/jpeg")
    MessageFactory(
        conversation=earlier.conversation, content="Got it.", message_type="outgoing", sender_type="assistant"
    )
    latest = customer_message("second photo", conversation=earlier.conversation)
    stored(latest, PNG, kind="image", content_type="image/png")

    history = chat_history(latest.conversation, batch_ids=[latest.pk], sees_images=True)

    assert history[0]["content"].startswith(
        "first photo\n[The customer sent an image that is not shown to you"
    )
    assert [part["type"] for part in history[-1]["content"]] == ["text", "image_url"]


def test_an_image_over_the_size_cap_is_described_not_sent(settings):
    settings.CAPTAIN = {**settings.CAPTAIN, "VISION_MAX_IMAGE_BYTES": 100}
    message = customer_message("look")
    stored(message, PNG, kind="image", content_type="image/png")

    [turn] = chat_history(message.conversation, batch_ids=[message.pk], sees_images=True)

    assert isinstance(turn["content"], str) and "not shown to you" in turn["content"]


def test_a_refused_image_is_stated_as_not_received():
    message = customer_message("look")
    Attachment.objects.create(
        account_id=message.account_id,
        message=message,
        kind="image",
        status="refused",
        provider_ref="r",
        error="x",
    )

    [turn] = chat_history(message.conversation, batch_ids=[message.pk], sees_images=True)

    assert turn["content"] == f"look\n{IMAGE_NOT_RECEIVED}"


def test_the_history_fetches_the_batchs_pending_image_first(llm, settings):
    token = "123:tok"
    with FakeFileHost() as host:
        host.telegram_file(JPEG, token=token, file_id="AgACphoto")
        inbox = InboxFactory(
            channel_type=Inbox.ChannelType.TELEGRAM,
            access_token=token,
            provider_config={"api_base_url": host.base_url},
        )
        message = customer_message(conversation=ConversationFactory(contact_inbox__inbox=inbox))
        pending = Attachment.objects.create(
            account_id=message.account_id, message=message, kind="image", provider_ref="AgACphoto"
        )

        history = chat_history(message.conversation, batch_ids=[message.pk], sees_images=True)

    pending.refresh_from_db()
    assert pending.status == "stored"
    request = ask_model(llm, history, VISION_MODEL)
    assert (
        image_parts(request)[0]["image_url"]["url"]
        == "data:image/jpeg;base64," + base64.b64encode(JPEG).decode()
    )


# ---- voice notes ---------------------------------------------------------------------------------------------


class FakeTranscriptionServer:
    """`POST /v1/audio/transcriptions` (multipart, as the openai SDK sends it) answering `{"text": ...}`."""

    def __init__(self, transcript: str) -> None:
        self.transcript = transcript
        self.requests: list[dict[str, Any]] = []

    def __enter__(self) -> FakeTranscriptionServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                head = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
                form = email.message_from_bytes(head + body, policy=email.policy.HTTP)
                parts = {
                    part.get_param("name", header="content-disposition"): part for part in form.iter_parts()
                }
                fake.requests.append(
                    {
                        "path": self.path,
                        "authorization": self.headers.get("Authorization"),
                        "model": parts["model"].get_content(),
                        "file": parts["file"].get_payload(decode=True),
                        "filename": parts["file"].get_filename(),
                    }
                )
                answer = json.dumps({"text": fake.transcript}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"


def test_a_voice_note_reaches_the_model_as_its_transcript(llm, settings):
    message = customer_message("[voice]")
    voice = stored(message, OGG_OPUS, kind="audio", content_type="audio/ogg")
    with FakeTranscriptionServer("My order 1234 never arrived") as whisper:
        settings.CAPTAIN = {
            **settings.CAPTAIN,
            "TRANSCRIPTION_BASE_URL": whisper.base_url,
            "TRANSCRIPTION_API_KEY": "whisper-key",
            "TRANSCRIPTION_MODEL": "whisper-large-v3",
        }
        history = chat_history(message.conversation, batch_ids=[message.pk], sees_images=False)
        again = chat_history(message.conversation, batch_ids=[message.pk], sees_images=False)

    assert len(whisper.requests) == 1  # stored on the attachment: transcribed once
    [seen] = whisper.requests
    assert (seen["path"], seen["authorization"], seen["model"]) == (
        "/v1/audio/transcriptions",
        "Bearer whisper-key",
        "whisper-large-v3",
    )
    assert seen["file"] == OGG_OPUS and seen["filename"] == f"voice-{voice.pk}.bin"
    voice.refresh_from_db()
    assert voice.transcript == "My order 1234 never arrived"
    assert history == again
    request = ask_model(llm, history, TEXT_MODEL)
    assert request["messages"][-1]["content"] == f"[voice]\n{VOICE_TRANSCRIPT}\nMy order 1234 never arrived"


def test_without_transcription_the_model_is_told_it_cannot_hear(llm):
    message = customer_message("[voice]")
    stored(message, OGG_OPUS, kind="audio", content_type="audio/ogg")

    history = chat_history(message.conversation, batch_ids=[message.pk], sees_images=True)
    request = ask_model(llm, history, VISION_MODEL)

    assert request["messages"][-1]["content"] == f"[voice]\n{VOICE_UNHEARD}"
    assert image_parts(request) == []
