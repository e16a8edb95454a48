"""Account resolution and permission policies shared by every account-scoped REST endpoint.

Every URL is `accounts/<account_id>/...`. The caller's membership in that account is resolved once, by the
`IsAccountMember` policy, and kept on the view; someone who is not a member gets 404 (never 403), so the API
never confirms that another tenant's account or objects exist.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.permissions import SAFE_METHODS, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from helpdesk.models import Membership
from helpdesk.selectors import access_membership


class IsAccountMember(BasePermission):
    """The caller is a member of the URL's account; anyone else gets 404."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        view.membership = access_membership(user=request.user, account_id=view.kwargs["account_id"])
        return True


class IsAccountAdmin(BasePermission):
    """The caller is an administrator of the URL's account (403 for its agents)."""

    message = "Only administrators of this account may do this."

    def has_permission(self, request: Request, view: APIView) -> bool:
        membership = getattr(view, "membership", None)
        return membership is not None and membership.role == Membership.Role.ADMIN


class IsAccountAdminOrReadOnly(IsAccountAdmin):
    """Members may read; only administrators of the account may write."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        return request.method in SAFE_METHODS or super().has_permission(request, view)


class AccountApi(APIView):
    """Base of every `accounts/<account_id>/...` endpoint: authenticated, member of the account."""

    permission_classes = [IsAuthenticated, IsAccountMember]
    membership: Membership

    @property
    def account_id(self) -> int:
        return self.membership.account_id

    def serializer_context(self) -> dict[str, Any]:
        """What input serializers need to scope their related-field querysets to this account."""
        return {"request": self.request, "view": self, "account_id": self.account_id}


class AccountAdminApi(AccountApi):
    permission_classes = [IsAuthenticated, IsAccountMember, IsAccountAdmin]


class AccountAdminOrReadOnlyApi(AccountApi):
    permission_classes = [IsAuthenticated, IsAccountMember, IsAccountAdminOrReadOnly]


class Pagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 200


def paginated_response(
    *,
    request: Request,
    view: APIView,
    queryset: QuerySet,
    serializer_class: type,
    context: dict | None = None,
) -> Response:
    """One page of `queryset` (`?limit=&offset=`) in DRF's {count, next, previous, results} envelope."""
    paginator = Pagination()
    page = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True, context=context or {}).data)
