"""The audit log's writer: configuration models register here, and every save or delete of a registered row
records who did it, from where, and the before/after of its fields (helpdesk.models.AuditEntry).

Signals, not calls in each service: a change made in the Django admin, on a dashboard page, over the API or in a
shell is recorded alike. The person and the place come from the request being served (`AuditRequestMiddleware`
keeps it in a context variable; DRF sets `request.user` on the same object once it has authenticated a token),
so nothing has to be passed down to the save. Secret fields (by name, or named at registration) are recorded as
"changed", never with a value: the log is read by every administrator of the account and leaves the database in
backups. Captain registers its own models from its app config (helpdesk never imports captain).
"""

from __future__ import annotations

import datetime
import decimal
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db import models
from django.db.models.signals import post_delete, post_save, pre_delete, pre_save
from django.http import HttpRequest, HttpResponse

from helpdesk.models import (
    Account,
    AuditEntry,
    AutomationRule,
    CannedResponse,
    CustomAttributeDefinition,
    Inbox,
    InboxMember,
    Invitation,
    Macro,
    Membership,
    SlaPolicy,
    Team,
    TeamMember,
    WebhookEndpoint,
)

SECRET_MARK = "changed"
# A field whose name holds one of these is a secret whatever the model says: a new secret field added later is
# masked without anyone remembering to register it.
SECRET_WORDS = ("secret", "password", "token", "api_key", "encrypted", "credential")
# Bookkeeping every row has; a change to them alone is not a configuration change.
IGNORED_FIELDS = frozenset({"id", "created_at", "updated_at"})
MAX_VALUE_CHARS = 1000

_request: ContextVar[HttpRequest | None] = ContextVar("audit_request", default=None)
_deleting_accounts = threading.local()


@dataclass(frozen=True)
class Registration:
    account_path: str
    """Attributes from the row to its account id, dot-separated ("account_id", "assistant.account_id")."""
    secret_fields: frozenset[str]
    exclude: frozenset[str]

    def is_secret(self, name: str) -> bool:
        lowered = name.lower()
        return name in self.secret_fields or any(word in lowered for word in SECRET_WORDS)


_registry: dict[type[models.Model], Registration] = {}


class AuditRequestMiddleware:
    """Keeps the request being served where the audit signals can see who is changing what."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)


@contextmanager
def audit_request(request: HttpRequest) -> Iterator[None]:
    """Attribute the changes made inside to `request`'s person (what the middleware does for each request)."""
    token = _request.set(request)
    try:
        yield
    finally:
        _request.reset(token)


def audit_register(
    model: type[models.Model],
    *,
    account_path: str = "account_id",
    secret_fields: Iterable[str] = (),
    exclude: Iterable[str] = (),
) -> None:
    """Record every save and delete of `model` in its account's audit log. Idempotent."""
    _registry[model] = Registration(account_path, frozenset(secret_fields), frozenset(exclude))
    uid = f"audit-{model._meta.label_lower}"
    pre_save.connect(_before_save, sender=model, dispatch_uid=f"{uid}-pre", weak=False)
    post_save.connect(_after_save, sender=model, dispatch_uid=f"{uid}-post", weak=False)
    post_delete.connect(_after_delete, sender=model, dispatch_uid=f"{uid}-delete", weak=False)


def audit_registered() -> list[str]:
    """Labels ("app.model") of the audited models, for the log's filter."""
    return sorted(model._meta.label_lower for model in _registry)


def register_helpdesk_models() -> None:
    """The helpdesk's own configuration models (captain's register theirs in captain/apps.py)."""
    audit_register(Account, account_path="pk")
    audit_register(Membership, exclude={"availability", "last_seen_at", "last_assigned_at"})
    # provider_config holds verify tokens beside plain settings: "changed" only, like the secrets.
    audit_register(Inbox, secret_fields={"provider_config"})
    audit_register(InboxMember, account_path="inbox.account_id")
    audit_register(Team)
    audit_register(TeamMember, account_path="team.account_id", exclude={"last_assigned_at"})
    audit_register(WebhookEndpoint)
    audit_register(CannedResponse)
    audit_register(CustomAttributeDefinition)
    # What the team's automation does to conversations: rules, macros (personal ones too) and SLA policies.
    audit_register(AutomationRule)
    audit_register(Macro)
    audit_register(SlaPolicy)
    # Invitations made and withdrawn (accepting one shows as the membership it creates); the token's hash is
    # of no use to a reader.
    audit_register(Invitation, exclude={"token_hash"})
    # Deleting an account deletes its log too: nothing may be written for it while it goes.
    pre_delete.connect(_account_deleting, sender=Account, dispatch_uid="audit-account-deleting", weak=False)
    post_delete.connect(_account_deleted, sender=Account, dispatch_uid="audit-account-deleted", weak=False)


def _deleting() -> set[int]:
    ids: set[int] | None = getattr(_deleting_accounts, "ids", None)
    if ids is None:
        ids = _deleting_accounts.ids = set()
    return ids


def _account_deleting(sender: type[Account], instance: Account, **kwargs: Any) -> None:
    _deleting().add(instance.pk)


def _account_deleted(sender: type[Account], instance: Account, **kwargs: Any) -> None:
    _deleting().discard(instance.pk)


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime.datetime | datetime.date | datetime.time | decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, str) and len(value) > MAX_VALUE_CHARS:
        return value[:MAX_VALUE_CHARS] + "…"
    if isinstance(value, list | tuple):
        return [_json_value(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _json_value(item) for key, item in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _fields(model: type[models.Model], registration: Registration) -> list[models.Field]:
    return [
        field
        for field in model._meta.concrete_fields
        if field.name not in IGNORED_FIELDS
        and field.name not in registration.exclude
        and not field.primary_key
    ]


def _snapshot(
    instance: models.Model, registration: Registration, only: Iterable[str] | None = None
) -> dict[str, Any]:
    """The row's audited values as written: a deferred field was not loaded (reading it would query) and a
    save with `update_fields` wrote only those, so neither is compared."""
    deferred = instance.get_deferred_fields()
    written = None if only is None else set(only)
    return {
        field.attname: getattr(instance, field.attname)
        for field in _fields(type(instance), registration)
        if field.attname not in deferred
        and (written is None or field.name in written or field.attname in written)
    }


def field_changes(
    before: dict[str, Any] | None, after: dict[str, Any] | None, registration: Registration
) -> dict[str, list[Any]]:
    """{field: [before, after]} of the fields that differ; secrets as ["changed", "changed"]."""
    names = list((after or before or {}).keys())
    changes: dict[str, list[Any]] = {}
    for name in names:
        old = (before or {}).get(name)
        new = (after or {}).get(name)
        if before is not None and after is not None and old == new:
            continue
        if before is None and new in (None, "", [], {}):
            continue  # a new row's empty fields say nothing
        if after is None and old in (None, "", [], {}):
            continue
        if registration.is_secret(name):
            changes[name] = [SECRET_MARK, SECRET_MARK]
        else:
            changes[name] = [_json_value(old), _json_value(new)]
    return changes


def _account_id(instance: models.Model, registration: Registration) -> int | None:
    value: Any = instance
    try:
        for name in registration.account_path.split("."):
            value = getattr(value, name)
            if value is None:
                return None
    except ObjectDoesNotExist:
        return None
    return int(value)


def _source(request: HttpRequest | None) -> str:
    if request is None:
        return AuditEntry.Source.SYSTEM
    if request.path.startswith("/admin/"):
        return AuditEntry.Source.ADMIN
    if request.path.startswith("/api/"):
        return AuditEntry.Source.API
    return AuditEntry.Source.DASHBOARD


def _actor(request: HttpRequest | None) -> tuple[Any, str]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None, ""
    return user, user.get_username()[:150]


def _write(instance: models.Model, action: str, changes: dict[str, list[Any]]) -> None:
    registration = _registry[type(instance)]
    account_id = _account_id(instance, registration)
    if account_id is None or account_id in _deleting():
        return
    request = _request.get()
    actor, actor_name = _actor(request)
    AuditEntry.objects.create(
        account_id=account_id,
        actor=actor,
        actor_name=actor_name,
        source=_source(request),
        action=action,
        model=instance._meta.label_lower,
        object_id=str(instance.pk)[:64],
        object_repr=str(instance)[:200],
        changes=changes,
    )


def _before_save(
    sender: type[models.Model], instance: models.Model, raw: bool = False, **kwargs: Any
) -> None:
    registration = _registry.get(sender)
    if registration is None or raw or instance._state.adding or instance.pk is None:
        return
    attnames = [field.attname for field in _fields(sender, registration)]
    before = sender._base_manager.filter(pk=instance.pk).values(*attnames).first()
    instance.__dict__["_audit_before"] = before


def _after_save(
    sender: type[models.Model], instance: models.Model, created: bool, raw: bool = False, **kwargs: Any
) -> None:
    registration = _registry.get(sender)
    if registration is None or raw:
        return
    before = None if created else instance.__dict__.pop("_audit_before", None)
    after = _snapshot(instance, registration, only=kwargs.get("update_fields"))
    if before is not None:
        before = {name: value for name, value in before.items() if name in after}
    changes = field_changes(before, after, registration)
    if not created and not changes:
        return  # saved without a change: nothing to tell
    _write(instance, AuditEntry.Action.CREATED if created else AuditEntry.Action.UPDATED, changes)


def _after_delete(sender: type[models.Model], instance: models.Model, **kwargs: Any) -> None:
    registration = _registry.get(sender)
    if registration is None:
        return
    _write(
        instance,
        AuditEntry.Action.DELETED,
        field_changes(_snapshot(instance, registration), None, registration),
    )


def audit_rows_created(rows: Iterable[models.Model]) -> None:
    """Record rows a service wrote with `bulk_create` (which sends no signal) as created."""
    for row in rows:
        registration = _registry.get(type(row))
        if registration is not None and row.pk is not None:
            changes = field_changes(None, _snapshot(row, registration), registration)
            _write(row, AuditEntry.Action.CREATED, changes)


PURGE_BATCH = 5000
PURGE_SECONDS = 30.0


def audit_purge(*, older_than: datetime.datetime) -> int:
    """Delete the entries recorded before `older_than` (the retention sweep), one short DELETE of
    `PURGE_BATCH` rows at a time so a backlog never holds a long lock, for at most `PURGE_SECONDS` (the next
    sweep goes on); returns how many went."""
    started, total = time.monotonic(), 0
    while True:
        batch = AuditEntry.objects.filter(created_at__lt=older_than).order_by().values("pk")[:PURGE_BATCH]
        deleted, _ = AuditEntry.objects.filter(pk__in=batch).delete()
        total += deleted
        if deleted < PURGE_BATCH or time.monotonic() - started >= PURGE_SECONDS:
            return total
