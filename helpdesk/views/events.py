"""(Being written: the account's event stream.)"""

from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path

from .base import ACCOUNT


def account_events(request: HttpRequest, account_id: int) -> HttpResponse:
    return HttpResponse("Live updates are unavailable.", status=503, content_type="text/plain")


urlpatterns: list[URLPattern] = [
    path(f"{ACCOUNT}events/", account_events, name="account-events"),
]
