"""The embedded demo's outbound allowlist (scripts/supervisor.py, what scripts/run sets when
HELPDESK_OUTBOUND_ALLOWED_HOSTS is unset) admits the one local port a demo URL needs, the callback receiver of
`manage.py captain_demo_chat`, and no other service of the machine: not Redis, not the model server, not the web
server. The bundled model is the operator's endpoint, which the outbound policy does not filter."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from captain.management.commands import captain_demo_chat
from helpdesk.outbound import OutboundRefused, check_url
from tests.support.servers import ROOT

spec = importlib.util.spec_from_file_location("supervisor_allowlist", ROOT / "scripts" / "supervisor.py")
supervisor = importlib.util.module_from_spec(spec)
sys.modules["supervisor_allowlist"] = supervisor
spec.loader.exec_module(supervisor)

DEMO_PORTS = {"REDIS_PORT": "6379", "LLM_PORT": "8081", "PORT": "8000"}


def use_allowlist(settings, value: str) -> None:
    settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": value.split(",")}


def test_the_demo_allowlist_admits_the_demo_chat_receiver_and_no_other_local_port(settings, monkeypatch):
    monkeypatch.delenv("DEMO_CALLBACK_PORT", raising=False)
    use_allowlist(settings, supervisor.demo_outbound_allowlist(DEMO_PORTS))

    receiver_port = captain_demo_chat.callback_port_default()  # what the second terminal's command binds
    check_url(captain_demo_chat.callback_url(receiver_port))  # no exception: the replies get through
    for name, port in DEMO_PORTS.items():
        with pytest.raises(OutboundRefused, match=f"port {port} is not allowlisted"):
            check_url(f"http://127.0.0.1:{port}/")
        assert port != str(receiver_port), name


def test_both_sides_follow_demo_callback_port(settings, monkeypatch):
    monkeypatch.setenv("DEMO_CALLBACK_PORT", "9123")
    assert supervisor.demo_outbound_allowlist(dict(DEMO_PORTS, DEMO_CALLBACK_PORT="9123")) == (
        "127.0.0.1:9123,127.0.0.1:8025"
    )
    assert captain_demo_chat.callback_port_default() == 9123


def test_the_demo_allowlist_admits_the_email_demo_smtp_sink(settings, monkeypatch):
    """The demo e-mail inbox sends through `manage.py helpdesk_email_demo`'s sink; the seed and the allowlist
    name the same port, and DEMO_SMTP_PORT moves both."""
    from captain.management.commands import captain_demo_seed
    from helpdesk.outbound.policy import OutboundPolicy, checked_addresses

    use_allowlist(settings, supervisor.demo_outbound_allowlist(DEMO_PORTS))
    assert supervisor.DEMO_SMTP_PORT == captain_demo_seed.DEMO_SMTP_PORT
    checked_addresses("127.0.0.1", int(supervisor.DEMO_SMTP_PORT), OutboundPolicy.from_settings())  # admitted
    moved = supervisor.demo_outbound_allowlist(dict(DEMO_PORTS, DEMO_SMTP_PORT="9125"))
    assert moved.split(",")[1] == "127.0.0.1:9125"
