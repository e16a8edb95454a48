"""Tenant scoping of the admin: superusers see everything; other staff users see and change only objects of
accounts where they hold an *admin* Membership. The mixins here serve helpdesk's and captain's admins alike."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import QuerySet
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest

from helpdesk.models import Account, Membership

if TYPE_CHECKING:
    from django.contrib.admin.options import BaseModelAdmin, InlineModelAdmin

    # The mixins below are typed as the admin classes they are mixed into, so `super()`, `self.model` and the
    # permission methods they override resolve against Django's. The form-field scoping serves any admin.
    _AnyAdmin = BaseModelAdmin[Any]
    _ModelAdmin = admin.ModelAdmin
    _InlineAdmin = InlineModelAdmin
else:
    # At run time they are plain mixins: the concrete admins name Django's classes, which take no type arguments.
    _AnyAdmin = object
    _ModelAdmin = _InlineAdmin = Generic

_ModelT = TypeVar("_ModelT", bound=models.Model)
_ParentT = TypeVar("_ParentT", bound=models.Model)

_ADMIN_ACCOUNT_IDS_ATTR = "_helpdesk_admin_account_ids"


def admin_account_ids(request: HttpRequest) -> frozenset[int]:
    """Accounts the request's user administers (cached on the request)."""
    cached: frozenset[int] | None = getattr(request, _ADMIN_ACCOUNT_IDS_ATTR, None)
    if cached is None:
        user = request.user
        cached = frozenset(
            Membership.objects.filter(user_id=user.pk, role=Membership.Role.ADMIN).values_list(
                "account_id", flat=True
            )
            if user.is_authenticated and user.is_active and user.is_staff
            else []
        )
        setattr(request, _ADMIN_ACCOUNT_IDS_ATTR, cached)  # HttpRequest declares no such attribute
    return cached


def account_lookup_for(model: type[models.Model]) -> str | None:
    """The ORM path from `model` to its account id, or None if the model is not owned by an account."""
    if model is Account:
        return "pk"
    names = {f.name for f in model._meta.get_fields()}
    for path in ("account", "assistant__account", "inbox__account", "conversation__account"):
        if path.split("__")[0] in names:
            return f"{path}_id" if "__" not in path else path
    return None


def scoped_queryset(model: type[models.Model], account_ids: frozenset[int]) -> QuerySet:
    """`model`'s rows of `account_ids`; for users, members of those accounts; nothing otherwise."""
    manager = model._default_manager
    if model is get_user_model():
        return manager.filter(memberships__account_id__in=account_ids).distinct()
    lookup = account_lookup_for(model)
    if lookup is None:
        return manager.none()  # unknown ownership: offer nothing rather than another tenant's rows
    return manager.filter(**{f"{lookup}__in": account_ids})


def account_id_of(obj: models.Model) -> int | None:
    lookup = account_lookup_for(type(obj))
    if lookup is None:
        return None
    if lookup == "pk":
        return obj.pk
    value: Any = obj
    *parents, last = lookup.split("__")
    for name in parents:
        value = getattr(value, name, None)
        if value is None:
            return None
    return getattr(value, last if last.endswith("_id") else f"{last}_id", None)


def _related_model(
    db_field: models.ForeignKey[Any, Any] | models.ManyToManyField[Any, Any],
) -> type[models.Model]:
    # Typed `type[Model] | "self"`, but Django resolves "self" and "app.Model" to the class when the app registry
    # loads, before any admin form is built.
    return cast(type[models.Model], db_field.related_model)


class _ScopedFormfieldsMixin(_AnyAdmin):
    def formfield_for_foreignkey(
        self, db_field: models.ForeignKey[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> forms.ModelChoiceField[Any] | None:
        if not request.user.is_superuser:
            kwargs["queryset"] = scoped_queryset(_related_model(db_field), admin_account_ids(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(
        self, db_field: models.ManyToManyField[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> forms.ModelMultipleChoiceField[Any] | None:
        if not request.user.is_superuser:
            kwargs["queryset"] = scoped_queryset(_related_model(db_field), admin_account_ids(request))
        return super().formfield_for_manytomany(db_field, request, **kwargs)


# Write-only credentials. A changelist filter on one (`?secret__startswith=a`) answers "some rows" or "none",
# which recovers the value a character at a time; no lookup may name them, at any depth of a relation path.
SECRET_FIELD_NAMES = frozenset(
    {
        "secret",
        "access_token",
        "webhook_token",
        "password",
        "api_key_encrypted",
        "smtp_password_encrypted",
        "imap_password_encrypted",
    }
)


class AccountScopedAdminMixin(_ScopedFormfieldsMixin, _ModelAdmin[_ModelT]):
    """For a ModelAdmin: non-superuser staff reach only the accounts they administer."""

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        if SECRET_FIELD_NAMES.intersection(lookup.split(LOOKUP_SEP)):
            return False  # the admin answers 400 (DisallowedModelAdminLookup)
        return super().lookup_allowed(lookup, value, request)

    read_only: bool = False
    """No one adds or changes rows (ledgers, run records); superusers may still delete where allowed."""
    superuser_only_add: bool = False
    superuser_only_delete: bool = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[_ModelT]:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        lookup = account_lookup_for(self.model)
        if lookup is None:
            return queryset.none()
        return queryset.filter(**{f"{lookup}__in": admin_account_ids(request)})

    def _in_scope(self, request: HttpRequest, obj: models.Model | None) -> bool:
        account_ids = admin_account_ids(request)
        return bool(account_ids) and (obj is None or account_id_of(obj) in account_ids)

    def has_module_permission(self, request: HttpRequest) -> bool:
        if request.user.is_superuser:
            return super().has_module_permission(request)
        return bool(admin_account_ids(request))

    def has_view_permission(self, request: HttpRequest, obj: _ModelT | None = None) -> bool:
        if request.user.is_superuser:
            return super().has_view_permission(request, obj)
        return self._in_scope(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: _ModelT | None = None) -> bool:
        if self.read_only:
            return False
        if request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return self._in_scope(request, obj)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        if self.read_only:
            return False
        if request.user.is_superuser:
            return super().has_add_permission(request, *args)
        return not self.superuser_only_add and self._in_scope(request, None)

    def has_delete_permission(self, request: HttpRequest, obj: _ModelT | None = None) -> bool:
        if request.user.is_superuser:
            return super().has_delete_permission(request, obj)
        return not (self.read_only or self.superuser_only_delete) and self._in_scope(request, obj)

    def save_model(self, request: HttpRequest, obj: _ModelT, form: Any, change: bool) -> None:
        # The scoped form fields already refuse other tenants' choices; this is the last line, e.g. for a
        # custom form that forgot to scope a field.
        if not request.user.is_superuser and account_id_of(obj) not in admin_account_ids(request):
            raise PermissionDenied
        super().save_model(request, obj, form, change)


class AccountScopedInlineMixin(_ScopedFormfieldsMixin, _InlineAdmin[_ModelT, _ParentT]):
    """For an inline: its parent page is already scoped; this scopes the inline's choices and permissions."""

    read_only: bool = False

    def _allowed(self, request: HttpRequest) -> bool:
        return request.user.is_superuser or bool(admin_account_ids(request))

    def has_view_permission(self, request: HttpRequest, obj: _ParentT | None = None) -> bool:
        if request.user.is_superuser:
            return super().has_view_permission(request, obj)
        return self._allowed(request)

    def has_add_permission(self, request: HttpRequest, obj: _ParentT | None = None) -> bool:
        if self.read_only:
            return False
        if request.user.is_superuser:
            return super().has_add_permission(request, obj)
        return self._allowed(request)

    def has_change_permission(self, request: HttpRequest, obj: _ParentT | None = None) -> bool:
        if self.read_only:
            return False
        if request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return self._allowed(request)

    def has_delete_permission(self, request: HttpRequest, obj: _ParentT | None = None) -> bool:
        if self.read_only:
            return False
        if request.user.is_superuser:
            return super().has_delete_permission(request, obj)
        return self._allowed(request)
