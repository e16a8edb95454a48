from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django.views.defaults import page_not_found
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from helpdesk.api.exceptions import api_not_found
from helpdesk.api.provider_webhooks import email_webhook, slack_webhook, telegram_webhook, whatsapp_webhook
from helpdesk.api.webhooks import api_channel_webhook
from helpdesk.views.people import RateLimitedPasswordResetView
from helpdesk.views.sign_in import SignInView, admin_sign_in, two_factor_verify

urlpatterns = [
    # Before the admin's own: its sign-in form has no two-factor step.
    path("admin/login/", admin_sign_in, name="admin-sign-in"),
    path("admin/", admin.site.urls),
    path("webhooks/api/<str:webhook_token>/", api_channel_webhook, name="webhook-api"),
    path("webhooks/telegram/<str:webhook_token>/", telegram_webhook, name="webhook-telegram"),
    path("webhooks/whatsapp/<str:webhook_token>/", whatsapp_webhook, name="webhook-whatsapp"),
    path("webhooks/slack/<str:webhook_token>/", slack_webhook, name="webhook-slack"),
    path("webhooks/email/<str:webhook_token>/", email_webhook, name="webhook-email"),
    path("widget/", include("helpdesk.api.widget")),
    path("api/v1/", include("helpdesk.api.urls")),
    path("api/v1/captain/", include("captain.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("auth/password_reset/", RateLimitedPasswordResetView.as_view(), name="password_reset"),
    path("auth/login/", SignInView.as_view(), name="login"),
    path("auth/two-factor/", two_factor_verify, name="two-factor-verify"),
    path("auth/", include("django.contrib.auth.urls")),
    path("", include("captain.urls_dashboard")),
    path("", include("helpdesk.views.urls")),
]


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A JSON 404 under /api/ (a client of the API cannot read Django's HTML page), the HTML page elsewhere."""
    if request.path_info.startswith("/api/"):
        return api_not_found(request, exception)
    return page_not_found(request, exception)


handler404 = not_found
