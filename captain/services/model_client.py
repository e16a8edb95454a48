"""The process-wide model client, configured from settings with explicit timeouts and retry budget."""

from __future__ import annotations

from functools import cache

from ..conf import captain_setting
from ..runtime import ModelClient, OpenAIChatModel, make_openai_client


@cache
def model_client() -> ModelClient:
    client = make_openai_client(
        captain_setting("OPENAI_BASE_URL"),
        captain_setting("OPENAI_API_KEY"),
        captain_setting("LLM_TIMEOUT_SECONDS"),
        captain_setting("LLM_MAX_RETRIES"),
    )
    return OpenAIChatModel(client)
