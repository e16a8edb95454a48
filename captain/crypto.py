"""Captain's secrets stored at rest (a tenant's model API key, custom tool secrets), with helpdesk's one scheme.

`CAPTAIN["SECRETS_KEYS"]` (env `CAPTAIN_SECRETS_KEYS`, comma-separated Fernet keys): the first encrypts, all
decrypt. Without keys one is derived from SECRET_KEY under captain's own label ("captain-secrets:"), kept as it
was so secrets stored before the scheme moved to helpdesk/crypto.py still decrypt.
"""

from __future__ import annotations

from captain.conf import captain_setting
from helpdesk.crypto import SecretBox, SecretKeysInvalid, SecretUnreadable

__all__ = [
    "CAPTAIN_SECRETS",
    "SecretKeysInvalid",
    "SecretUnreadable",
    "secret_decrypt",
    "secret_encrypt",
    "secret_rotate",
]

CAPTAIN_SECRETS = SecretBox(
    keys=lambda: captain_setting("SECRETS_KEYS"),
    derivation_label=b"captain-secrets:",
    env_name="CAPTAIN_SECRETS_KEYS",
)


def secret_encrypt(plaintext: str) -> str:
    """The token stored for `plaintext` ("" stays "": no secret set)."""
    return CAPTAIN_SECRETS.encrypt(plaintext)


def secret_decrypt(token: str) -> str:
    return CAPTAIN_SECRETS.decrypt(token)


def secret_rotate(token: str) -> str:
    """`token` encrypted again with the first key (raises SecretUnreadable when no key reads it)."""
    return CAPTAIN_SECRETS.rotate(token)
