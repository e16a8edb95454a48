"""Inbox secrets stored at rest (an e-mail inbox's SMTP and IMAP passwords): Fernet from `cryptography`.

The scheme of captain's own secrets (captain/crypto.py), kept here because helpdesk never imports captain:
`HELPDESK["SECRETS_KEYS"]` (env `HELPDESK_SECRETS_KEYS`, comma-separated Fernet keys) - the first encrypts, all
decrypt, so an operator rotates by putting a new key first and running `manage.py helpdesk_secrets_rotate`.
Without keys one is derived from SECRET_KEY (its own derivation, not captain's), which keeps the demo working
with no extra setting but ties stored secrets to SECRET_KEY.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

from helpdesk.conf import helpdesk_setting


class SecretUnreadable(Exception):
    """A stored secret that none of the configured keys can decrypt (keys rotated away, or data corrupted)."""


class SecretKeysInvalid(Exception):
    """HELPDESK_SECRETS_KEYS holds something that is not a Fernet key."""


def _fernet() -> MultiFernet:
    keys = [str(key).strip() for key in helpdesk_setting("SECRETS_KEYS") if str(key).strip()]
    if keys:
        try:
            return MultiFernet([Fernet(key.encode()) for key in keys])
        except ValueError as exc:
            raise SecretKeysInvalid(
                "HELPDESK_SECRETS_KEYS must be Fernet keys (32 url-safe base64-encoded bytes each)"
            ) from exc
    derived = hashlib.sha256(b"helpdesk-secrets:" + settings.SECRET_KEY.encode()).digest()
    return MultiFernet([Fernet(base64.urlsafe_b64encode(derived))])


def secret_encrypt(plaintext: str) -> str:
    """The token stored for `plaintext` ("" stays "": no secret set)."""
    if not plaintext:
        return ""
    return _fernet().encrypt(plaintext.encode()).decode()


def secret_decrypt(token: str) -> str:
    if not token:
        return ""
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable(
            "a stored secret cannot be decrypted with the configured keys (HELPDESK_SECRETS_KEYS)"
        ) from exc


def secret_rotate(token: str) -> str:
    """`token` encrypted again with the first key (raises SecretUnreadable when no key reads it)."""
    if not token:
        return ""
    try:
        return _fernet().rotate(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable(
            "a stored secret cannot be decrypted with the configured keys (HELPDESK_SECRETS_KEYS)"
        ) from exc
