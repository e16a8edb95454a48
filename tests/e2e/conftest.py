"""What the e-mail and widget e2e tests start alike: a real SMTP server (aiosmtpd) on 127.0.0.1, the scripted
model server and a real Celery worker on the test Redis, each stopped by the handle that started it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller

from tests.helpdesk.channels_email.test_smtp_out import Sink
from tests.support import fake_llm_server as fake
from tests.support.database import database_url_for_subprocess
from tests.support.servers import CeleryWorker, free_port, start_celery_worker


@dataclass
class MailStack:
    sink: Sink
    """Every mail the SMTP server got: (envelope sender, recipients, raw bytes)."""
    port: int
    """The SMTP server's port on 127.0.0.1."""
    worker: CeleryWorker
    answers: dict[str, str] = field(default_factory=dict)
    """What the model answers: the first entry whose key is in the customer's latest message (set by the test;
    decided from the request itself, so the answer is right whatever else the worker asks the model)."""

    def smtp_config(self) -> dict[str, str]:
        """An e-mail inbox's settings for this SMTP server."""
        return {"smtp_host": "127.0.0.1", "smtp_port": str(self.port), "smtp_security": "none"}


@pytest.fixture
def mail_stack(redis_url, tmp_path: Path) -> Iterator[MailStack]:
    sink, port = Sink(), free_port()
    answers: dict[str, str] = {}

    def answer(request: dict) -> fake.Step:
        latest = fake.last_user_message(request)
        return fake.text(next((text for key, text in answers.items() if key in latest), "(no answer set)"))

    smtp = Controller(sink, hostname="127.0.0.1", port=port)
    smtp.start()
    try:
        with fake.FakeLLMServer(responder=answer) as model:
            worker = start_celery_worker(
                env={
                    "DATABASE_URL": database_url_for_subprocess(),
                    "REDIS_URL": redis_url,
                    "OPENAI_BASE_URL": model.base_url,
                    "OPENAI_API_KEY": "test",
                    "CAPTAIN_LLM_TIMEOUT": "5",
                    "CAPTAIN_LLM_MAX_RETRIES": "0",
                    "CAPTAIN_DEBOUNCE_SECONDS": "0",
                },
                log_path=tmp_path / "worker.log",
            )
            try:
                yield MailStack(sink=sink, port=port, worker=worker, answers=answers)
            finally:
                worker.stop()
    finally:
        smtp.stop()
