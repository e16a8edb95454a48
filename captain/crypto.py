"""Secrets stored at rest (a tenant's own model API key): Fernet from `cryptography`, keys from the environment.

`CAPTAIN["SECRETS_KEYS"]` (env `CAPTAIN_SECRETS_KEYS`, comma-separated Fernet keys): the first encrypts, all
decrypt, so an operator rotates by putting a new key first. Without it a key is derived from SECRET_KEY, which
keeps the embedded demo working with no extra setting but ties stored secrets to SECRET_KEY.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

from captain.conf import captain_setting


class SecretUnreadable(Exception):
    """A stored secret that none of the configured keys can decrypt (keys rotated away, or data corrupted)."""


def _fernet() -> MultiFernet:
    keys: list[str] = list(captain_setting("SECRETS_KEYS"))
    if keys:
        return MultiFernet([Fernet(key.strip().encode()) for key in keys])
    derived = hashlib.sha256(b"captain-secrets:" + settings.SECRET_KEY.encode()).digest()
    return MultiFernet([Fernet(base64.urlsafe_b64encode(derived))])


def secret_encrypt(plaintext: str) -> str:
    if not plaintext:
        return ""
    return _fernet().encrypt(plaintext.encode()).decode()


def secret_decrypt(token: str) -> str:
    if not token:
        return ""
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable("a stored secret cannot be decrypted with the configured keys") from exc
