"""What a file must be to be kept: the accepted types, the size limit and the first bytes' verdict.

Shared by every way a file reaches us (helpdesk.services.attachments: downloaded from a provider or received
inside a message) so one set of rules decides what is stored and what the dashboard serves: the declared type
is the sender's claim, the first bytes (`sniff_content_type`) are what we keep and serve the file as.
"""

from __future__ import annotations

from helpdesk.channels.media import Refused
from helpdesk.conf import helpdesk_setting
from helpdesk.models import Attachment

# What we store and serve: images a browser and a vision model can show, and voice notes / audio a browser
# plays. The extension is only for the stored name.
ACCEPTED_TYPES: dict[str, str] = {
    "image/jpeg": ".jpg",
    "image/png": ".png",
    "image/webp": ".webp",
    "image/gif": ".gif",
    "audio/ogg": ".ogg",
    "audio/mpeg": ".mp3",
    "audio/mp4": ".m4a",
    "audio/wav": ".wav",
    "audio/webm": ".webm",
}
# Declared types that name an accepted format by another name (what providers and phones really send).
DECLARED_ALIASES: dict[str, str] = {
    "image/jpg": "image/jpeg",
    "image/pjpeg": "image/jpeg",
    "audio/opus": "audio/ogg",
    "audio/mp3": "audio/mpeg",
    "audio/x-m4a": "audio/mp4",
    "audio/m4a": "audio/mp4",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/vnd.wave": "audio/wav",
}
# Declared types that say nothing about the content: the bytes decide.
UNDECLARED = frozenset({"", "application/octet-stream", "binary/octet-stream"})

SNIFF_BYTES = 16


def normalised_type(value: str) -> str:
    base = value.split(";", 1)[0].strip().lower()
    return DECLARED_ALIASES.get(base, base)


def sniff_content_type(head: bytes, *, kind: str = "") -> str | None:
    """The accepted type the first bytes of a file show, or None. Containers that hold audio or video alike
    (MP4, WebM) count as audio only for a file reported as audio: a video is not a voice note."""
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "audio/wav"
    if head.startswith(b"OggS"):
        return "audio/ogg"
    if head.startswith(b"ID3"):
        return "audio/mpeg"
    # An MPEG audio frame: 11 sync bits, then a layer other than "reserved" (ADTS AAC has layer 00).
    if len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0 and head[1] & 0x06:
        return "audio/mpeg"
    if head[4:8] == b"ftyp" and (head[8:11] == b"M4A" or kind == Attachment.Kind.AUDIO):
        return "audio/mp4"
    if head.startswith(b"\x1a\x45\xdf\xa3") and kind == Attachment.Kind.AUDIO:
        return "audio/webm"
    return None


def kind_of(content_type: str) -> str:
    return Attachment.Kind.IMAGE if content_type.startswith("image/") else Attachment.Kind.AUDIO


def max_bytes() -> int:
    return int(helpdesk_setting("ATTACHMENT_MAX_BYTES"))


def check_declared(declared_type: str, declared_size: int) -> None:
    declared = normalised_type(declared_type)
    if declared not in UNDECLARED and declared not in ACCEPTED_TYPES:
        raise Refused(f"files of type {declared[:60]} are not accepted")
    if declared_size > max_bytes():
        raise Refused(f"the file is larger than {max_bytes()} bytes")
