"""The macros a person may run: the account's shared ones and their own personal ones."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from helpdesk.models import Macro
from helpdesk.models.automation import Visibility


def macros_for(*, account_id: int, user: AbstractBaseUser) -> QuerySet[Macro]:
    return Macro.objects.filter(account_id=account_id).filter(
        Q(visibility=Visibility.ACCOUNT) | Q(visibility=Visibility.PERSONAL, owner_id=user.pk)
    )


def macro_for(*, account_id: int, user: AbstractBaseUser, macro_id: int) -> Macro | None:
    return macros_for(account_id=account_id, user=user).filter(pk=macro_id).first()
