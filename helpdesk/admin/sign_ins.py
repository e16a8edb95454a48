"""Sign-in security in the Django admin, for superusers only (people belong to several accounts, so no account's
administrator owns them): the sign-in history, read-only, and each person's authenticator and backup codes,
which may only be deleted. That is how someone who lost both their phone and their backup codes gets back in;
django-otp's own device admins are replaced because they show the secret and its QR code to whoever opens them."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice

from helpdesk.models import SignInEvent

for device_model in (TOTPDevice, StaticDevice):
    if admin.site.is_registered(device_model):
        admin.site.unregister(device_model)


class SuperuserDeleteOnlyAdmin(admin.ModelAdmin):
    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(TOTPDevice)
class AuthenticatorAdmin(SuperuserDeleteOnlyAdmin):
    list_display = ("user", "confirmed", "created_at", "last_used_at")
    search_fields = ("user__username", "user__email")
    fields = ("user", "name", "confirmed", "created_at", "last_used_at", "throttling_failure_count")


@admin.register(StaticDevice)
class BackupCodesAdmin(SuperuserDeleteOnlyAdmin):
    list_display = ("user", "confirmed", "created_at", "last_used_at")
    search_fields = ("user__username", "user__email")
    fields = ("user", "name", "created_at", "last_used_at")


@admin.register(SignInEvent)
class SignInEventAdmin(SuperuserDeleteOnlyAdmin):
    list_display = ("created_at", "username", "outcome", "ip_address")
    list_filter = ("outcome",)
    search_fields = ("username", "ip_address")
    date_hierarchy = "created_at"
    fields = ("created_at", "user", "username", "outcome", "ip_address", "user_agent")
