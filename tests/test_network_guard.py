"""The test suite itself refuses to reach anything but 127.0.0.1."""

import socket

import pytest

from tests.support.network_guard import RemoteNetworkBlocked


@pytest.mark.parametrize("address", [("10.1.2.3", 443), ("93.184.216.34", 80), ("api.openai.com", 443)])
def test_remote_connections_are_blocked(address):
    with socket.socket() as s, pytest.raises(RemoteNetworkBlocked):
        s.connect(address)


def test_openai_sdk_against_a_remote_model_fails_in_tests():
    from captain.runtime import ModelError, ModelSettings, OpenAIChatModel, make_openai_client

    model = OpenAIChatModel(make_openai_client("https://api.openai.com/v1", "sk-test", 2, 0))
    with pytest.raises(ModelError):
        model.complete(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "hi"}],
            settings=ModelSettings(temperature=0),
        )
