"""The website widget shows the files an agent attached to a reply as links the visitor opens without a login
(signed, served by us); a note's files and the visitor's own messages list none."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from helpdesk.models import Message
from helpdesk.services.messages import message_create_agent_reply, message_create_note
from tests.factories import UserFactory
from tests.helpdesk.channels_widget.support import call, new_visitor, send, widget_inbox
from tests.support.fake_files import PNG

pytestmark = pytest.mark.django_db

PDF = b"%PDF-1.7\n" + b"1 0 obj <<>> endobj\n" * 40


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = str(tmp_path)
    return tmp_path


def test_a_replys_files_reach_the_visitor_as_links_that_open_them(client):
    inbox = widget_inbox()
    token = new_visitor(client, inbox)
    assert send(client, inbox, token, "Can I have the invoice?").status_code == 201
    conversation = Message.objects.get().conversation
    agent = UserFactory()
    message_create_note(
        conversation=conversation, content="internal", user=agent, files=[SimpleUploadedFile("n.png", PNG)]
    )
    message_create_agent_reply(
        conversation=conversation,
        user=agent,
        content="Attached",
        files=[SimpleUploadedFile("invoice.pdf", PDF, "application/pdf")],
    )

    thread = call(client, "GET", inbox, "messages", token=token).json()["messages"]

    assert [(m["text"], [f["name"] for f in m["files"]]) for m in thread] == [
        ("Can I have the invoice?", []),
        ("Attached", ["invoice.pdf"]),
    ]
    opened = client.get(urlsplit(thread[1]["files"][0]["url"]).path)
    assert opened.status_code == 200
    assert b"".join(opened.streaming_content) == PDF
