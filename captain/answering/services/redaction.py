"""The account's credentials, so what is shown to people (the debug log, the live panel) can be checked against
them: every known secret value is replaced wherever it appears, whatever recorded it. The custom-tool client
already redacts what it records; this is the second line, for a response that echoed a token back into the
model's context or a span recorded before redaction."""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

from captain.actions.models import CustomTool
from captain.assistants.models import ModelEndpoint
from captain.crypto import SecretUnreadable, secret_decrypt

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 4
"""Shorter values are not replaced: "abc" would mangle ordinary text and protects nothing."""


def account_secrets(account_id: int, *, tools: bool = True, endpoints: bool = True) -> list[str]:
    """Custom tools' secrets (and the Basic token made from one) and model endpoints' API keys, longest first
    (a Basic token is replaced whole, never partly by a shorter secret it contains). Unreadable ones are skipped:
    they cannot have been sent either. `tools`/`endpoints` False: the caller knows there are none (no query)."""
    secrets: list[str] = []
    rows = CustomTool.objects.filter(account_id=account_id).exclude(secret_encrypted="")
    for tool in rows.only("secret_encrypted", "auth_username") if tools else []:
        try:
            secret = secret_decrypt(tool.secret_encrypted)
        except SecretUnreadable:
            continue
        secrets += [secret, base64.b64encode(f"{tool.auth_username}:{secret}".encode()).decode()]
    keys = ModelEndpoint.objects.filter(account_id=account_id).exclude(api_key_encrypted="")
    for token in keys.values_list("api_key_encrypted", flat=True) if endpoints else []:
        try:
            secrets.append(secret_decrypt(token))
        except SecretUnreadable:
            continue
    return sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)


def scrub(value: Any, secrets: Iterable[str]) -> Any:
    """`value` (text, or a list/object of them) with every occurrence of a known secret replaced."""
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, list):
        return [scrub(v, secrets) for v in value]
    if isinstance(value, dict):
        return {k: scrub(v, secrets) for k, v in value.items()}
    return value
