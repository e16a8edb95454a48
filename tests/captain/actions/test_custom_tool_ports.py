"""A custom HTTP tool through the outbound policy's `host:port` allowlist, against real servers on 127.0.0.1: a
tool on the listed port saves and its test call answers; a tool on another local port (a Redis-like service) is
refused when saved, with the port named, and that port is never connected to."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from captain.actions.services.custom_tools import custom_tool_save, custom_tool_test_call
from tests.factories import AccountFactory
from tests.helpdesk.outbound.raw_server import RawServer, http_answer, raw_answer

pytestmark = pytest.mark.django_db


def tool_fields(name: str, port: int) -> dict[str, object]:
    return {
        "name": name,
        "description": "Look up an order. Use it when the customer asks where the order is.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        "url_template": f"http://127.0.0.1:{port}/orders/{{{{ order_id }}}}",
    }


def test_a_tool_reaches_the_allowlisted_port_only(settings):
    account = AccountFactory()
    answer = http_answer(200, b'{"status": "shipped"}', {"Content-Type": "application/json"})
    with RawServer(answer) as shop, RawServer(raw_answer(b"-ERR unknown command\r\n")) as redis_like:
        settings.HELPDESK = {**settings.HELPDESK, "OUTBOUND_ALLOWED_HOSTS": [f"127.0.0.1:{shop.port}"]}
        tool = custom_tool_save(account=account, fields=tool_fields("order_status", shop.port), secret=None)
        exchange = custom_tool_test_call(tool, {"order_id": "1042"})
        assert exchange["response"]["status"] == 200 and "shipped" in exchange["response"]["body"]

        with pytest.raises(ValidationError, match=f"port {redis_like.port} is not allowlisted"):
            custom_tool_save(account=account, fields=tool_fields("cache_peek", redis_like.port), secret=None)
        assert redis_like.requests == []
