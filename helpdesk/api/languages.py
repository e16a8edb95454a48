"""The caller's own settings over the REST API: `me/settings/`.

- `GET` -> `{"language": "zh-hans"}` ("" follows the browser's Accept-Language).
- `PATCH {"language": "en" | "zh-hans" | ""}` sets it; another code answers 400 naming the choices.

The language belongs to the person, so the route is not under `accounts/<id>/`: it is the same in all of them.
"""

from __future__ import annotations

from django.urls import URLPattern, path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from helpdesk.i18n import remember_person_language
from helpdesk.models import Language
from helpdesk.selectors.languages import person_language
from helpdesk.services.languages import person_language_set


class PersonSettingsSerializer(serializers.Serializer):
    language = serializers.ChoiceField(
        choices=[("", "The browser's language"), *Language.choices],
        allow_blank=True,
        help_text="The dashboard's language; empty follows the browser's Accept-Language.",
    )

    class Meta:
        ref_name = "PersonSettings"


class PersonSettingsApi(APIView):
    """The caller's own settings, the same in every account they belong to."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=PersonSettingsSerializer)
    def get(self, request: Request) -> Response:
        return Response({"language": person_language(user_id=request.user.pk)})

    @extend_schema(request=PersonSettingsSerializer, responses=PersonSettingsSerializer)
    def patch(self, request: Request) -> Response:
        data = PersonSettingsSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        if "language" not in data.validated_data:
            # An empty PATCH changes nothing and answers the current settings, as every PATCH of the API does.
            return Response({"language": person_language(user_id=request.user.pk)})
        language = person_language_set(user_id=request.user.pk, language=data.validated_data["language"])
        # A dashboard session calling the API sees the change on its next page.
        if hasattr(request, "session"):
            remember_person_language(request.session, user_id=request.user.pk, language=language)
        return Response({"language": language})


urlpatterns: list[URLPattern] = [
    path("me/settings/", PersonSettingsApi.as_view(), name="person-settings"),
]
