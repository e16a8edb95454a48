"""Two-factor sign-in with an authenticator app (TOTP) and one-time backup codes, on django-otp's devices.

A person has at most one authenticator (a `TOTPDevice` named AUTHENTICATOR) and one set of backup codes (a
`StaticDevice` named BACKUP_CODES). Setting up is two steps: `totp_enrolment_start` makes an unconfirmed device
whose secret the page shows as a QR code, and `totp_enrolment_confirm` confirms it with a code the app made, so
a mistyped secret never locks anyone out. Every check goes through django-otp's throttling: after a wrong code the
device refuses to check another for 1, 2, 4, 8... seconds, and `CodeCheck.wait_seconds` says how long.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from typing import Any

import segno
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext
from django_otp import devices_for_user
from django_otp.models import Device
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

AUTHENTICATOR = "authenticator"
BACKUP_CODES = "backup codes"
BACKUP_CODE_COUNT = 10


class TwoFactorError(Exception):
    """A step refused, with the sentence the page shows; `wrong_code` when a code was checked and was wrong (the
    caller records it like a failed sign-in)."""

    def __init__(self, message: str, *, wrong_code: bool = False) -> None:
        super().__init__(message)
        self.wrong_code = wrong_code


@dataclass(frozen=True)
class CodeCheck:
    device: Device | None
    # Set when the code was refused unchecked: seconds until a device will check one again.
    wait_seconds: int = 0

    @property
    def ok(self) -> bool:
        return self.device is not None


def _normalised(code: str) -> str:
    # Apps show "123 456"; people paste with spaces or dashes.
    return "".join(ch for ch in code if ch.isalnum()).lower()


def _wait_seconds(devices: list[Device]) -> int:
    """The longest throttling wait among the devices, in whole seconds (0 when every one may check)."""
    now, wait = timezone.now(), 0.0
    for device in devices:
        allowed, data = device.verify_is_allowed()
        if not allowed and data and data.get("locked_until"):
            wait = max(wait, (data["locked_until"] - now).total_seconds())
    return math.ceil(wait)


def two_factor_check(*, user: Any, code: str) -> CodeCheck:
    """Check a code against the person's confirmed authenticator, then their backup codes (a backup code is used
    up). While every device is throttled the code is refused unchecked and the answer says how long to wait."""
    token = _normalised(code)
    devices = list(devices_for_user(user, confirmed=True, for_verify=True))
    if not token or not devices:
        return CodeCheck(device=None)
    if not any(device.verify_is_allowed()[0] for device in devices):
        return CodeCheck(device=None, wait_seconds=max(_wait_seconds(devices), 1))
    with transaction.atomic():
        for device in devices:
            if device.verify_token(token):
                return CodeCheck(device=device)
    return CodeCheck(device=None)


def totp_enrolment_start(*, user: Any) -> TOTPDevice:
    """The person's unconfirmed authenticator, made now with a fresh secret if there is none; refused when one is
    already confirmed (turn it off first)."""
    if TOTPDevice.objects.filter(user=user, confirmed=True).exists():
        raise TwoFactorError(gettext("Two-factor sign-in is already on."))
    device = TOTPDevice.objects.filter(user=user, confirmed=False, name=AUTHENTICATOR).first()
    return device or TOTPDevice.objects.create(user=user, name=AUTHENTICATOR, confirmed=False)


def totp_enrolment_confirm(*, user: Any, code: str) -> tuple[TOTPDevice, list[str]]:
    """Confirm the unconfirmed authenticator with a code it made; returns it and a fresh set of backup codes
    (shown once). A wrong code changes nothing but the device's throttling."""
    device = TOTPDevice.objects.filter(user=user, confirmed=False, name=AUTHENTICATOR).first()
    if device is None:
        raise TwoFactorError(gettext("Start the set-up again: there is no authenticator waiting for a code."))
    allowed, _ = device.verify_is_allowed()
    if not allowed:
        raise TwoFactorError(wait_sentence(_wait_seconds([device])))
    if not device.verify_token(_normalised(code)):
        raise TwoFactorError(
            gettext("That code is not right. Check the time on your phone and try the newest code.")
        )
    with transaction.atomic():
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        codes = _backup_codes_replace(user=user)
    return device, codes


def backup_codes_renew(*, user: Any) -> list[str]:
    """A new set of backup codes for a person with two-factor on; the old ones stop working."""
    if not TOTPDevice.objects.filter(user=user, confirmed=True).exists():
        raise TwoFactorError(gettext("Turn on two-factor sign-in first."))
    with transaction.atomic():
        return _backup_codes_replace(user=user)


def _backup_codes_replace(*, user: Any) -> list[str]:
    StaticDevice.objects.filter(user=user).delete()
    device = StaticDevice.objects.create(user=user, name=BACKUP_CODES, confirmed=True)
    codes = [StaticToken.random_token() for _ in range(BACKUP_CODE_COUNT)]
    StaticToken.objects.bulk_create(StaticToken(device=device, token=code) for code in codes)
    return codes


def two_factor_disable(*, user: Any, code: str) -> None:
    """Turn two-factor sign-in off, proven by a current code (or a backup code): a stolen session alone cannot."""
    check = two_factor_check(user=user, code=code)
    if check.wait_seconds:
        raise TwoFactorError(wait_sentence(check.wait_seconds))
    if not check.ok:
        raise TwoFactorError(gettext("That code is not right."), wrong_code=True)
    with transaction.atomic():
        TOTPDevice.objects.filter(user=user).delete()
        StaticDevice.objects.filter(user=user).delete()


def wait_sentence(seconds: int) -> str:
    """What a person reads while their devices refuse to check a code (django-otp's throttling)."""
    return gettext("Too many wrong codes. Wait %(seconds)s seconds and try again.") % {
        "seconds": max(seconds, 1)
    }


def totp_secret(device: TOTPDevice) -> str:
    """The secret as an app expects it typed in (base32, no padding)."""
    return base64.b32encode(device.bin_key).decode("ascii").rstrip("=")


def totp_qr_svg(device: TOTPDevice) -> str:
    """The device's otpauth:// URI as an inline SVG QR code, made here: the secret never leaves the server."""
    return str(segno.make(device.config_url, error="m").svg_inline(scale=4, dark="#111", light="#fff"))


def account_two_factor_set(*, account: Any, required: bool, by_user: Any) -> None:
    """Require (or stop requiring) two-factor sign-in for everyone in the account. An administrator without it
    cannot require it: the next page would lock them out of their own account until they set it up."""
    if required and not TOTPDevice.objects.filter(user=by_user, confirmed=True).exists():
        raise TwoFactorError(gettext("Turn on two-factor sign-in for yourself first."))
    if account.require_two_factor != required:
        account.require_two_factor = required
        account.save(update_fields=["require_two_factor"])
