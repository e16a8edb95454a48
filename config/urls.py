from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from helpdesk.api.webhooks import api_channel_webhook

urlpatterns = [
    path("admin/", admin.site.urls),
    path("webhooks/api/<str:webhook_token>/", api_channel_webhook, name="webhook-api"),
    path("api/v1/", include("helpdesk.api.urls")),
    path("api/v1/captain/", include("captain.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]
