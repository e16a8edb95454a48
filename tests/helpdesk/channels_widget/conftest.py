"""Fixtures of the widget tests: a real SMTP server (aiosmtpd) on 127.0.0.1 for the e-mail follow-up."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aiosmtpd.controller import Controller

from tests.helpdesk.channels_email.test_smtp_out import Sink
from tests.support.servers import free_port


@pytest.fixture
def sink() -> Iterator[tuple[Sink, int]]:
    """(the mails it got, its port); stopped after the test."""
    handler, port = Sink(), free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield handler, port
    finally:
        controller.stop()
