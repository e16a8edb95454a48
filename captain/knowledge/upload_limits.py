"""An upload handler that never keeps more of a file than the knowledge upload limit.

Django streams a multipart file to memory (small) or a temporary file (large) whatever its size; a 50 MB upload
would be written out in full only to be refused. This handler keeps at most `KNOWLEDGE_MAX_UPLOAD_BYTES` and
goes on counting the rest, so the uploaded file object reports the real `size` (and the service can say "the
file is 50.0 MiB; at most 20.0 MiB") while holding no more than the limit. The API and the dashboard
install it on the request before its body is read.
"""

from __future__ import annotations

import io
from typing import Any

from django.core.files.uploadedfile import InMemoryUploadedFile, UploadedFile
from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest

from captain.conf import captain_setting


class CappedUploadHandler(FileUploadHandler):
    """Keeps a file in memory while it is within the limit (a few MiB); past it, drops what it kept and only
    counts, so an oversized upload costs no memory beyond the limit."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.limit = int(captain_setting("KNOWLEDGE_MAX_UPLOAD_BYTES"))
        self.buffer = io.BytesIO()
        self.received = 0

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.buffer, self.received = io.BytesIO(), 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        self.received += len(raw_data)
        if self.received <= self.limit:
            self.buffer.write(raw_data)
        elif self.buffer.tell():
            self.buffer = io.BytesIO()  # over the limit: it will be refused, keep nothing
        return None  # consumed: no later handler sees the data

    def file_complete(self, file_size: int) -> UploadedFile:
        self.buffer.seek(0)
        # The real size, though nothing is kept of a file over the limit.
        return InMemoryUploadedFile(
            self.buffer, self.field_name, self.file_name or "", self.content_type, self.received, self.charset
        )


def cap_uploads(request: HttpRequest) -> None:
    """Install the handler; call before anything reads `request.POST` / `request.FILES`."""
    request.upload_handlers = [CappedUploadHandler(request)]
