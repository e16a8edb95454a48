"""Captain's secrets use helpdesk's one Fernet implementation (helpdesk.crypto.SecretBox) with its own keys.

The tokens below were written by captain/crypto.py and helpdesk/crypto.py as they were before the scheme was
shared (each its own copy of the code): they must still decrypt, or every tenant's stored model API key and
every inbox password would be lost on upgrade.
"""

from __future__ import annotations

import pytest
from django.test import override_settings

from captain import crypto as captain_crypto
from helpdesk import crypto as helpdesk_crypto

OLD_SECRET_KEY = "stored-before-the-move"
OLD_KEY = "q8PdNWVPUNr0Y8y5ws3xZ9sYJjSb5tCXmjQb-e6bWOo="
# Written by the previous captain/crypto.py: no CAPTAIN_SECRETS_KEYS (derived from SECRET_KEY), then OLD_KEY.
CAPTAIN_DERIVED_TOKEN = "gAAAAABrCox3EWXj4-sPmD567CSFakR1zz9pcnJA4GchvD1HKwPp7XDAzvkNip0VtwgUDwmPUmxsLICbLauBZJjnsgF6oge5I2vchoLR0GmNFQnFEY28VDA="
CAPTAIN_KEYED_TOKEN = (
    "gAAAAABrCox3TqJToJJ50AWFo4R71ivPOtKxtOrfKwrxExvNYKFQTb3PpNOeyMGPh1VwRJ4WywenDV108mHBZXpS_hjp5eLs1Q=="
)
# Written by the previous helpdesk/crypto.py with no HELPDESK_SECRETS_KEYS.
HELPDESK_DERIVED_TOKEN = (
    "gAAAAABrCox3xxcUnP8WOHTqjatu1wPKul9mm3YOaoc8DcRQF61c52H1o8rukZSwEs3iEaHfVnMqYjAGYZjiF1LpZ9ZzIXJo9w=="
)

NO_KEYS = {"CAPTAIN": {"SECRETS_KEYS": []}, "HELPDESK": {"SECRETS_KEYS": []}}


def test_captain_and_helpdesk_share_one_implementation() -> None:
    assert captain_crypto.SecretUnreadable is helpdesk_crypto.SecretUnreadable
    assert type(captain_crypto.CAPTAIN_SECRETS) is type(helpdesk_crypto.HELPDESK_SECRETS)


@override_settings(SECRET_KEY=OLD_SECRET_KEY, **NO_KEYS)
def test_secrets_stored_by_the_old_code_without_keys_still_decrypt() -> None:
    assert captain_crypto.secret_decrypt(CAPTAIN_DERIVED_TOKEN) == "sk-tenant-derived"
    assert helpdesk_crypto.secret_decrypt(HELPDESK_DERIVED_TOKEN) == "smtp-derived"


@override_settings(CAPTAIN={"SECRETS_KEYS": [OLD_KEY]})
def test_secret_stored_by_the_old_code_with_a_key_still_decrypts() -> None:
    assert captain_crypto.secret_decrypt(CAPTAIN_KEYED_TOKEN) == "sk-tenant-keyed"


@override_settings(SECRET_KEY=OLD_SECRET_KEY, **NO_KEYS)
def test_the_apps_keys_stay_apart() -> None:
    # Same SECRET_KEY, different derivation labels: one app's stored secret is not readable as the other's.
    with pytest.raises(helpdesk_crypto.SecretUnreadable, match="HELPDESK_SECRETS_KEYS"):
        helpdesk_crypto.secret_decrypt(CAPTAIN_DERIVED_TOKEN)
    with pytest.raises(captain_crypto.SecretUnreadable, match="CAPTAIN_SECRETS_KEYS"):
        captain_crypto.secret_decrypt(HELPDESK_DERIVED_TOKEN)


def test_captain_rotation_moves_an_old_secret_to_the_new_key() -> None:
    new_key = "Jm7mXh1bV0m3b8yS6G1c2x9eYQ4uQp0rL5tW8zA3kE0="
    with override_settings(CAPTAIN={"SECRETS_KEYS": [new_key, OLD_KEY]}):
        rotated = captain_crypto.secret_rotate(CAPTAIN_KEYED_TOKEN)
    assert rotated != CAPTAIN_KEYED_TOKEN
    with override_settings(CAPTAIN={"SECRETS_KEYS": [new_key]}):
        assert captain_crypto.secret_decrypt(rotated) == "sk-tenant-keyed"
    with (
        override_settings(CAPTAIN={"SECRETS_KEYS": [OLD_KEY]}),
        pytest.raises(captain_crypto.SecretUnreadable),
    ):
        captain_crypto.secret_decrypt(rotated)


@override_settings(CAPTAIN={"SECRETS_KEYS": ["not-a-fernet-key"]})
def test_a_bad_captain_key_is_named_in_the_error() -> None:
    with pytest.raises(captain_crypto.SecretKeysInvalid, match="CAPTAIN_SECRETS_KEYS must be Fernet keys"):
        captain_crypto.secret_encrypt("sk-anything")
