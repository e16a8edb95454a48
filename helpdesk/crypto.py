"""Secrets stored at rest: Fernet from `cryptography`, keys from the environment.

One implementation for every app: `SecretBox` holds the scheme and each app makes its own box over its own key
list, so helpdesk (an inbox's SMTP and IMAP passwords, `HELPDESK_SECRETS_KEYS`) and captain (a tenant's model API
key and custom tool secrets, `CAPTAIN_SECRETS_KEYS`, see captain/crypto.py) share the code but not the keys.
Keys are comma-separated Fernet keys: the first encrypts, all decrypt, so an operator rotates by putting a new key
first and running the app's rotation command. Without keys one is derived from SECRET_KEY under the box's own
label, which keeps the demo working with no extra setting but ties stored secrets to SECRET_KEY.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

from helpdesk.conf import helpdesk_setting


class SecretUnreadable(Exception):
    """A stored secret that none of the configured keys can decrypt (keys rotated away, or data corrupted)."""


class SecretKeysInvalid(Exception):
    """A secrets key list holds something that is not a Fernet key."""


@dataclass(frozen=True)
class SecretBox:
    """The keys are read on every call (not cached) so a settings change, or a test's override, takes effect."""

    keys: Callable[[], Iterable[object]]
    # The SECRET_KEY derivation's salt: changing it makes every secret stored without explicit keys unreadable.
    derivation_label: bytes
    # Named in errors so an operator knows which variable to fix.
    env_name: str

    def _fernet(self) -> MultiFernet:
        keys = [str(key).strip() for key in self.keys() if str(key).strip()]
        if keys:
            try:
                return MultiFernet([Fernet(key.encode()) for key in keys])
            except ValueError as exc:
                raise SecretKeysInvalid(
                    f"{self.env_name} must be Fernet keys (32 url-safe base64-encoded bytes each)"
                ) from exc
        derived = hashlib.sha256(self.derivation_label + settings.SECRET_KEY.encode()).digest()
        return MultiFernet([Fernet(base64.urlsafe_b64encode(derived))])

    def _unreadable(self) -> SecretUnreadable:
        return SecretUnreadable(
            f"a stored secret cannot be decrypted with the configured keys ({self.env_name})"
        )

    def encrypt(self, plaintext: str) -> str:
        """The token stored for `plaintext` ("" stays "": no secret set)."""
        if not plaintext:
            return ""
        return self._fernet().encrypt(plaintext.encode()).decode()

    def decrypt(self, token: str) -> str:
        if not token:
            return ""
        try:
            return self._fernet().decrypt(token.encode()).decode()
        except InvalidToken as exc:
            raise self._unreadable() from exc

    def rotate(self, token: str) -> str:
        """`token` encrypted again with the first key (raises SecretUnreadable when no key reads it)."""
        if not token:
            return ""
        try:
            return self._fernet().rotate(token.encode()).decode()
        except InvalidToken as exc:
            raise self._unreadable() from exc


HELPDESK_SECRETS = SecretBox(
    keys=lambda: helpdesk_setting("SECRETS_KEYS"),
    derivation_label=b"helpdesk-secrets:",
    env_name="HELPDESK_SECRETS_KEYS",
)


def secret_encrypt(plaintext: str) -> str:
    """The token stored for `plaintext` ("" stays "": no secret set)."""
    return HELPDESK_SECRETS.encrypt(plaintext)


def secret_decrypt(token: str) -> str:
    return HELPDESK_SECRETS.decrypt(token)


def secret_rotate(token: str) -> str:
    """`token` encrypted again with the first key (raises SecretUnreadable when no key reads it)."""
    return HELPDESK_SECRETS.rotate(token)
