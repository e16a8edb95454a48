"""Django's full password validators: similarity to the user's attributes, minimum length, the common-password
list and all-numeric passwords, wherever a person sets a password (admin, password change forms). Factories and
the demo seed call `set_password`, which validates nothing, on purpose."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("password", "complaint"),
    [
        ("alice.liddell", "too similar to the username"),
        ("x7!kq2", "too short"),
        ("password123", "too common"),
        ("83920571946", "entirely numeric"),
    ],
)
def test_weak_passwords_are_refused_with_the_reason(password, complaint):
    user = get_user_model()(username="alice.liddell", email="alice@example.com")
    with pytest.raises(ValidationError) as refused:
        validate_password(password, user)
    assert any(complaint in message for message in refused.value.messages)


def test_a_strong_password_passes():
    validate_password("correct horse battery staple", get_user_model()(username="alice"))


def test_the_admin_refuses_a_common_password_for_a_new_user(client):
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    response = client.post(
        "/admin/auth/user/add/",
        {
            "username": "newagent",
            "usable_password": "true",
            "password1": "password123",
            "password2": "password123",
        },
    )
    assert response.status_code == 200  # the form again, with the reason
    assert b"This password is too common." in response.content
    assert not get_user_model().objects.filter(username="newagent").exists()
