"""Voice notes to text: an OpenAI-compatible `/audio/transcriptions` endpoint (OpenAI's Whisper, a local
faster-whisper or whisper.cpp server ...), called through the `openai` SDK with the outbound policy's transport.

Off unless `CAPTAIN["TRANSCRIPTION_BASE_URL"]` is set. A transcript is stored on the Attachment, so each voice
note is transcribed once, whatever the number of runs that read it; a failure stores nothing and is retried by
the next run (the model is told meanwhile that it cannot hear the note).
"""

from __future__ import annotations

import logging

import openai

from captain.conf import captain_setting
from captain.runtime import make_openai_client
from helpdesk.models import Attachment
from helpdesk.outbound import OutboundRefused, outbound_client

logger = logging.getLogger(__name__)

# Longest transcript kept: about 20 minutes of speech; a longer one is cut (the model needs the gist).
MAX_TRANSCRIPT_CHARS = 20_000


def transcription_configured() -> bool:
    return bool(captain_setting("TRANSCRIPTION_BASE_URL"))


def attachment_transcribe(*, attachment: Attachment) -> str:
    """The voice note's text ("" when transcription is off or failed); stored on the attachment once known."""
    if attachment.transcript:
        return attachment.transcript
    if not transcription_configured() or attachment.status != Attachment.Status.STORED or not attachment.file:
        return ""
    timeout = float(captain_setting("TRANSCRIPTION_TIMEOUT_SECONDS"))
    try:
        with attachment.file.open("rb") as handle:
            audio = handle.read()
        client = make_openai_client(
            captain_setting("TRANSCRIPTION_BASE_URL"),
            captain_setting("TRANSCRIPTION_API_KEY"),
            timeout,
            0,
            http_client=outbound_client(timeout=timeout),
        )
        extension = attachment.file.name.rpartition(".")[2]
        result = client.audio.transcriptions.create(
            model=captain_setting("TRANSCRIPTION_MODEL"),
            file=(f"voice-{attachment.pk}.{extension}", audio, attachment.content_type),
        )
    except (openai.OpenAIError, OutboundRefused, OSError) as exc:
        # The exception's text may quote the server's answer; the type is enough to find the cause.
        logger.warning("transcription of attachment %s failed: %s", attachment.pk, type(exc).__name__)
        return ""
    text = str(getattr(result, "text", "") or "").strip()[:MAX_TRANSCRIPT_CHARS]
    if text:
        Attachment.objects.filter(pk=attachment.pk).update(transcript=text)
        attachment.transcript = text
    return text
