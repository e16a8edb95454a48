"""What the model reads of a customer message that carried files (photos, voice notes ...).

- A model that can see images (`Endpoint.sees_images`) gets the message of this turn as a Chat Completions
  content list: the text part, then one `image_url` part per stored image (a `data:` URL read from storage, at
  most `VISION_MAX_IMAGE_BYTES` each and `VISION_MAX_IMAGES` per run, the latest first). Images of earlier
  turns are not sent again: they were seen when they arrived, and each one costs the whole request's size.
- Any other model gets a statement in the text it cannot miss: it cannot see the image, must say so if it
  matters, and must never describe or guess it. A model that believes it saw a photo makes things up.
- A voice note becomes its transcript when transcription is configured (captain.answering.services.transcription),
  otherwise the same kind of statement: the model cannot hear it.
- Files that were refused or could not be fetched are stated as such, with the same rule.

Statements are fixed text; the customer's words (caption, transcript) are data, appended after them.
"""

from __future__ import annotations

import base64
from collections import defaultdict
from collections.abc import Collection, Sequence
from typing import Any

from captain.answering.services.transcription import attachment_transcribe
from captain.conf import captain_setting
from helpdesk.models import Attachment

Content = str | list[dict[str, Any]]

IMAGE_UNSEEN = (
    "[The customer sent an image. You cannot see images: say so if it matters and ask them to describe it; "
    "never describe or guess its content.]"
)
IMAGE_NOT_SHOWN = (
    "[The customer sent an image that is not shown to you: if it matters, ask them to describe it; never "
    "describe or guess its content.]"
)
IMAGE_NOT_RECEIVED = (
    "[The customer sent an image that did not reach us: if it matters, say so and ask them to describe it; "
    "never describe or guess its content.]"
)
VOICE_UNHEARD = (
    "[The customer sent a voice note. You cannot hear voice notes: say so if it matters and ask them to write "
    "their message; never guess what it says.]"
)
VOICE_TRANSCRIPT = "[The customer sent a voice note; its automatic transcript follows.]"
FILE_UNOPENED = (
    "[The customer sent a {kind} that you cannot open: say so if it matters; never describe or guess its "
    "content.]"
)


def _image_data_url(attachment: Attachment) -> str | None:
    if attachment.size > int(captain_setting("VISION_MAX_IMAGE_BYTES")):
        return None
    try:
        with attachment.file.open("rb") as handle:
            data = handle.read(int(captain_setting("VISION_MAX_IMAGE_BYTES")) + 1)
    except OSError:
        return None
    if len(data) > int(captain_setting("VISION_MAX_IMAGE_BYTES")):
        return None
    return f"data:{attachment.content_type};base64,{base64.b64encode(data).decode('ascii')}"


def _statement(attachment: Attachment, *, sees_images: bool) -> str | None:
    """The text that stands for a file the model gets no part for; None for an image part."""
    stored = attachment.status == Attachment.Status.STORED
    if attachment.kind == Attachment.Kind.IMAGE:
        if not stored:
            return IMAGE_NOT_RECEIVED
        return None if sees_images else IMAGE_UNSEEN
    if attachment.kind == Attachment.Kind.AUDIO:
        transcript = attachment_transcribe(attachment=attachment) if stored else ""
        if transcript:
            return f"{VOICE_TRANSCRIPT}\n{transcript}"
        return VOICE_UNHEARD
    return FILE_UNOPENED.format(kind={"video": "video"}.get(attachment.kind, "file"))


def _content(
    text: str, files: Sequence[Attachment], *, sees_images: bool, image_parts: bool, images_left: int
) -> tuple[Content, int]:
    statements: list[str] = []
    images: list[str] = []
    for attachment in files:
        statement = _statement(attachment, sees_images=sees_images)
        if statement is None:
            url = _image_data_url(attachment) if image_parts and images_left > len(images) else None
            if url is None:
                statement = IMAGE_NOT_SHOWN
            else:
                images.append(url)
        if statement is not None:
            statements.append(statement)
    joined = "\n".join(part for part in (text, *statements) if part)
    if not images:
        return joined, 0
    parts: list[dict[str, Any]] = [{"type": "text", "text": joined}]
    parts.extend({"type": "image_url", "image_url": {"url": url}} for url in images)
    return parts, len(images)


def media_contents(
    messages: Sequence[tuple[int, str]], *, sees_images: bool, batch_ids: Collection[int] = ()
) -> dict[int, Content]:
    """The model content of each customer message (id, stored text) that carries files; messages without
    files are left out (their text is their content). Image parts go only to messages of `batch_ids`."""
    files: dict[int, list[Attachment]] = defaultdict(list)
    for attachment in Attachment.objects.filter(message_id__in=[pk for pk, _ in messages]).order_by("id"):
        files[attachment.message_id].append(attachment)
    images_left = int(captain_setting("VISION_MAX_IMAGES")) if sees_images else 0
    contents: dict[int, Content] = {}
    # Latest first: when the image budget runs out, the oldest images are the ones described in words.
    for pk, text in sorted(messages, key=lambda item: item[0], reverse=True):
        if pk not in files:
            continue
        content, used = _content(
            text,
            files[pk],
            sees_images=sees_images,
            image_parts=sees_images and pk in batch_ids,
            images_left=images_left,
        )
        images_left -= used
        contents[pk] = content
    return contents
