"""Django admin for the helpdesk: tenant scoping for non-superuser staff, the write-only inbox secret."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from helpdesk.models import Account, Inbox, Membership
from tests.factories import (
    AccountFactory,
    ContactInboxFactory,
    ConversationFactory,
    InboxFactory,
    MembershipFactory,
    MessageFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def admin_form_data(response) -> dict:
    """The POST body the admin page would send back unchanged (main form, inline management forms, rows)."""
    forms = [response.context["adminform"].form]
    for inline in response.context["inline_admin_formsets"]:
        forms += [inline.formset.management_form, *inline.formset.forms]
    data = {}
    for form in forms:
        for name in form.fields:
            bound = form[name]
            value = bound.value()
            if value is None or value is False:
                continue
            if value is True:
                data[bound.html_name] = "on"
            elif isinstance(value, list | tuple):
                data[bound.html_name] = [str(v) for v in value]
            else:
                data[bound.html_name] = value
    return data


def staff_user(**kwargs):
    user = UserFactory(is_staff=True, **kwargs)
    user.save()  # UserFactory skips the post-generation save: without it the session's password hash is stale
    return user


@pytest.fixture
def account_a():
    return AccountFactory(name="Alpha Co")


@pytest.fixture
def account_b():
    return AccountFactory(name="Bravo Co")


@pytest.fixture
def staff_a(account_a):
    user = staff_user()
    MembershipFactory(account=account_a, user=user, role=Membership.Role.ADMIN)
    return user


@pytest.fixture
def client_a(staff_a):
    client = Client()
    client.force_login(staff_a)
    return client


def test_changelist_shows_only_own_accounts_inboxes(client_a, account_a, account_b):
    InboxFactory(account=account_a, name="alpha-inbox")
    InboxFactory(account=account_b, name="bravo-inbox")

    response = client_a.get("/admin/helpdesk/inbox/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "alpha-inbox" in html
    assert "bravo-inbox" not in html


@pytest.mark.parametrize("model", ["inbox", "account", "conversation", "contact", "message"])
def test_other_accounts_change_page_is_not_reachable(client_a, account_b, model):
    conversation = ConversationFactory(
        contact_inbox=ContactInboxFactory(inbox=InboxFactory(account=account_b))
    )
    objects = {
        "inbox": conversation.inbox,
        "account": account_b,
        "conversation": conversation,
        "contact": conversation.contact,
        "message": MessageFactory(conversation=conversation),
    }

    response = client_a.get(f"/admin/helpdesk/{model}/{objects[model].pk}/change/")

    assert response.status_code in (302, 404)
    assert response.status_code == 404 or response.url == "/admin/"


def test_other_account_is_not_offered_and_not_accepted(client_a, account_a, account_b):
    page = client_a.get("/admin/helpdesk/inbox/add/")
    assert "Bravo Co" not in page.content.decode()

    response = client_a.post(
        "/admin/helpdesk/inbox/add/", {"account": account_b.pk, "name": "sneaky", "channel_type": "api"}
    )

    assert response.status_code == 200  # the form again, with an error
    assert "account" in response.context["adminform"].form.errors
    assert not Inbox.objects.filter(name="sneaky").exists()


def test_inbox_secret_is_not_rendered_and_webhook_url_is(client_a, account_a, settings):
    settings.PUBLIC_BASE_URL = "https://help.example.com"
    inbox = InboxFactory(account=account_a, secret="s3cr3t-value-never-shown")

    response = client_a.get(f"/admin/helpdesk/inbox/{inbox.pk}/change/")

    html = response.content.decode()
    assert response.status_code == 200
    assert "s3cr3t-value-never-shown" not in html
    assert f"https://help.example.com/webhooks/api/{inbox.webhook_token}/" in html
    assert "X-Helpdesk-Signature" in html


def test_blank_secret_keeps_the_old_one(client_a, account_a):
    inbox = InboxFactory(account=account_a, secret="old-secret")
    page = client_a.get(f"/admin/helpdesk/inbox/{inbox.pk}/change/")
    data = admin_form_data(page) | {"name": "Renamed"}

    response = client_a.post(f"/admin/helpdesk/inbox/{inbox.pk}/change/", data)

    assert response.status_code == 302
    inbox.refresh_from_db()
    assert (inbox.name, inbox.secret) == ("Renamed", "old-secret")


def test_new_secret_replaces_the_old_one(client_a, account_a):
    inbox = InboxFactory(account=account_a, secret="old-secret")
    page = client_a.get(f"/admin/helpdesk/inbox/{inbox.pk}/change/")

    response = client_a.post(
        f"/admin/helpdesk/inbox/{inbox.pk}/change/", admin_form_data(page) | {"new_secret": "brand-new"}
    )

    assert response.status_code == 302
    inbox.refresh_from_db()
    assert inbox.secret == "brand-new"


def test_new_inbox_gets_a_generated_secret_shown_once(client_a, account_a):
    response = client_a.post(
        "/admin/helpdesk/inbox/add/",
        {"account": account_a.pk, "name": "Web", "channel_type": "api"},
        follow=True,
    )

    inbox = Inbox.objects.get(name="Web")
    assert len(inbox.secret) == 64
    assert inbox.secret in response.content.decode()
    assert inbox.secret not in client_a.get(f"/admin/helpdesk/inbox/{inbox.pk}/change/").content.decode()


def test_agent_role_staff_gets_nothing(account_a):
    agent = staff_user()
    MembershipFactory(account=account_a, user=agent, role=Membership.Role.AGENT)
    InboxFactory(account=account_a)
    client = Client()
    client.force_login(agent)

    assert client.get("/admin/helpdesk/inbox/").status_code == 403


def test_account_admin_cannot_add_or_delete_accounts(client_a, account_a):
    assert client_a.get("/admin/helpdesk/account/add/").status_code == 403
    assert (
        client_a.post(f"/admin/helpdesk/account/{account_a.pk}/delete/", {"post": "yes"}).status_code == 403
    )
    assert Account.objects.filter(pk=account_a.pk).exists()


def test_membership_inline_offers_only_users_of_own_accounts(client_a, account_a, account_b):
    MembershipFactory(account=account_b, user=UserFactory(username="bravo-person"))
    MembershipFactory(account=account_a, user=UserFactory(username="alpha-person"))

    html = client_a.get(f"/admin/helpdesk/account/{account_a.pk}/change/").content.decode()

    assert "alpha-person" in html
    assert "bravo-person" not in html


def test_conversation_list_filters_by_status_and_lists_only_own_inboxes(client_a, account_a, account_b):
    own_inbox = InboxFactory(account=account_a, name="alpha-inbox")
    open_one = ConversationFactory(contact_inbox=ContactInboxFactory(inbox=own_inbox), status="open")
    ConversationFactory(contact_inbox=ContactInboxFactory(inbox=own_inbox), status="resolved")
    ConversationFactory(
        contact_inbox=ContactInboxFactory(inbox=InboxFactory(account=account_b, name="bravo-inbox"))
    )

    response = client_a.get("/admin/helpdesk/conversation/", {"status__exact": "open"})

    assert response.status_code == 200
    assert [c.pk for c in response.context["cl"].result_list] == [open_one.pk]
    html = response.content.decode()
    assert "alpha-inbox" in html
    assert "bravo-inbox" not in html


def test_conversation_page_shows_only_the_latest_messages_read_only(client_a, account_a):
    conversation = ConversationFactory(
        contact_inbox=ContactInboxFactory(inbox=InboxFactory(account=account_a))
    )
    messages = [MessageFactory(conversation=conversation, content=f"m{i}") for i in range(55)]

    response = client_a.get(f"/admin/helpdesk/conversation/{conversation.pk}/change/")

    assert response.status_code == 200
    (inline,) = [
        i for i in response.context["inline_admin_formsets"] if i.opts.model._meta.model_name == "message"
    ]
    shown = [form.instance.pk for form in inline.formset.forms]
    assert shown == [m.pk for m in messages[-50:]]
    assert inline.has_change_permission is False


# A plural made by appending "s" to a word that needs "es" or "ies": "...ys" after a consonant ("entrys"), "...xs"
# ("inboxs"), "...ss", "...zs", "...shs", "...chs".
NAIVE_PLURAL = re.compile(r"(?:[^aeiou]ys|xs|ss|zs|shs|chs)$", re.IGNORECASE)


@pytest.mark.parametrize(
    ("plural", "wrong"),
    [
        ("credit ledger entrys", True),
        ("inboxs", True),
        ("addresss", True),
        ("batchs", True),
        ("credit ledger entries", False),
        ("inboxes", False),
        ("api keys", False),
        ("FAQ entries", False),
    ],
)
def test_naive_plural_detector(plural, wrong):
    assert bool(NAIVE_PLURAL.search(plural)) is wrong


def admin_plural_names() -> dict[str, str]:
    """Every plural the admin shows: registered models (index, changelists) and their inlines (headings)."""
    from django.contrib import admin

    names = {}
    for model, model_admin in admin.site._registry.items():
        names[model._meta.label] = str(model._meta.verbose_name_plural)
        for inline in model_admin.inlines:
            label = f"{model._meta.label} inline {inline.__name__}"
            names[label] = str(inline.verbose_name_plural or inline.model._meta.verbose_name_plural)
    return names


def test_admin_names_have_correct_plurals():
    names = admin_plural_names()
    assert len(names) > 10  # the walk found the project's models, not an empty registry
    wrong = {label: plural for label, plural in names.items() if NAIVE_PLURAL.search(plural)}
    assert wrong == {}, f"give these models a Meta.verbose_name_plural: {wrong}"


@pytest.mark.parametrize("app_label", ["helpdesk", "captain"])
def test_every_project_model_has_a_correct_plural(app_label):
    """Models not in the admin still show their plural elsewhere (inlines, API docs, messages)."""
    from django.apps import apps

    wrong = {
        model._meta.label: str(model._meta.verbose_name_plural)
        for model in apps.get_app_config(app_label).get_models()
        if NAIVE_PLURAL.search(str(model._meta.verbose_name_plural))
    }
    assert wrong == {}, f"give these models a Meta.verbose_name_plural: {wrong}"


def test_admin_index_shows_correct_plurals():
    """What a newcomer sees: the model names on the admin index of a superuser."""
    user = UserFactory(is_staff=True, is_superuser=True)
    user.save()
    client = Client()
    client.force_login(user)
    response = client.get("/admin/")
    assert response.status_code == 200
    shown = [str(model["name"]) for app in response.context["app_list"] for model in app["models"]]
    assert len(shown) > 10
    assert [name for name in shown if NAIVE_PLURAL.search(name)] == []


@pytest.mark.parametrize(
    "path",
    [
        "/admin/helpdesk/inbox/?secret__startswith={prefix}",
        "/admin/helpdesk/inbox/?access_token__startswith={prefix}",
        "/admin/helpdesk/inbox/?webhook_token__startswith={prefix}",
        "/admin/helpdesk/inbox/?secret__regex=^{prefix}",
        "/admin/helpdesk/conversation/?inbox__secret__startswith={prefix}",
        "/admin/helpdesk/message/?inbox__access_token__startswith={prefix}",
    ],
)
def test_admin_lists_refuse_lookups_on_secret_fields(client_a, account_a, path):
    """A write-only secret must not be recoverable one character at a time through list filters."""
    inbox = InboxFactory(account=account_a, secret="s3cret-value", access_token="t0ken-value")
    ConversationFactory(contact_inbox__inbox=inbox)

    responses = [
        client_a.get(path.format(prefix=prefix)) for prefix in ("s3", "t0", inbox.webhook_token[:3], "zz")
    ]

    assert [r.status_code for r in responses] == [400, 400, 400, 400]


def test_superusers_cannot_filter_on_secrets_either(account_a):
    inbox = InboxFactory(account=account_a, secret="s3cret-value")
    admin_user = staff_user(is_superuser=True)
    client = Client()
    client.force_login(admin_user)

    assert client.get(f"/admin/helpdesk/inbox/?secret__startswith={inbox.secret[:2]}").status_code == 400
    assert client.get("/admin/helpdesk/inbox/?name__startswith=x").status_code == 200  # ordinary lookups work


# ---- teams, canned responses, satisfaction, notifications, structured inbox settings -------------------------


def _team_post(account, name, users):
    data = {
        "account": account.pk,
        "name": name,
        "description": "",
        "auto_assign": "on",
        "team_members-TOTAL_FORMS": str(len(users)),
        "team_members-INITIAL_FORMS": "0",
    }
    for i, user in enumerate(users):
        data[f"team_members-{i}-user"] = str(user.pk)
    return data


def test_team_members_must_be_people_of_the_teams_account(account_a, account_b):
    from helpdesk.models import Team

    # A superuser sees every user, so only the row check stands between a team and another account's people.
    root = staff_user(is_superuser=True)
    client = Client()
    client.force_login(root)
    ours, theirs = staff_user(), staff_user()
    MembershipFactory(account=account_a, user=ours)
    MembershipFactory(account=account_b, user=theirs)

    refused = client.post("/admin/helpdesk/team/add/", _team_post(account_a, "Billing", [theirs]))
    assert refused.status_code == 200
    errors = [form.errors for form in refused.context["inline_admin_formsets"][0].formset.forms]
    assert "is not a member of Alpha Co" in str(errors)
    assert not Team.objects.exists()

    saved = client.post("/admin/helpdesk/team/add/", _team_post(account_a, "Billing", [ours]))
    assert saved.status_code == 302
    assert list(Team.objects.get().members.all()) == [ours]


def test_team_pages_are_scoped_and_offer_only_the_accounts_people(client_a, account_a, account_b):
    from helpdesk.models import Team

    Team.objects.create(account=account_a, name="Alpha billing")
    Team.objects.create(account=account_b, name="Bravo billing")
    theirs = staff_user(username="bravo-person")
    MembershipFactory(account=account_b, user=theirs)
    listing = client_a.get("/admin/helpdesk/team/").content.decode()
    assert "Alpha billing" in listing and "Bravo billing" not in listing
    add = client_a.get("/admin/helpdesk/team/add/")
    user_choices = add.context["inline_admin_formsets"][0].formset.empty_form.fields["user"].queryset
    assert theirs not in user_choices
    refused = client_a.post("/admin/helpdesk/team/add/", _team_post(account_a, "Sneaky", [theirs]))
    assert refused.status_code == 200 and not Team.objects.filter(name="Sneaky").exists()


def test_canned_responses_are_scoped(client_a, account_a, account_b):
    from helpdesk.models import CannedResponse

    CannedResponse.objects.create(account=account_a, short_code="hello", content="Hello there")
    CannedResponse.objects.create(account=account_b, short_code="bravo", content="Bravo secret")
    listing = client_a.get("/admin/helpdesk/cannedresponse/").content.decode()
    assert "/hello" in listing or "hello" in listing
    assert "Bravo secret" not in listing and "bravo" not in listing
    saved = client_a.post(
        "/admin/helpdesk/cannedresponse/add/",
        {"account": account_a.pk, "short_code": "bye", "content": "Bye!"},
    )
    assert saved.status_code == 302
    refused = client_a.post(
        "/admin/helpdesk/cannedresponse/add/", {"account": account_b.pk, "short_code": "x", "content": "x"}
    )
    assert refused.status_code == 200 and not CannedResponse.objects.filter(short_code="x").exists()


def test_csat_and_notifications_are_read_only_and_scoped(client_a, staff_a, account_a, account_b):
    from helpdesk.models import CsatResponse, Notification

    own = ConversationFactory(account=account_a)
    other = ConversationFactory(account=account_b)
    mine = CsatResponse.objects.create(account=account_a, conversation=own, rating=4, comment="quick")
    CsatResponse.objects.create(account=account_b, conversation=other, rating=1, comment="bravo-comment")
    note = Notification.objects.create(
        account=account_a, user=staff_a, kind="assigned", conversation=own, text="Assigned to you"
    )
    Notification.objects.create(
        account=account_b, user=staff_a, kind="assigned", conversation=other, text="bravo-notice"
    )
    csat = client_a.get("/admin/helpdesk/csatresponse/").content.decode()
    assert "quick" in csat and "bravo-comment" not in csat
    notices = client_a.get("/admin/helpdesk/notification/").content.decode()
    assert "Assigned to you" in notices and "bravo-notice" not in notices
    assert client_a.get("/admin/helpdesk/csatresponse/add/").status_code == 403
    assert client_a.get("/admin/helpdesk/notification/add/").status_code == 403
    for obj in (mine, note):
        url = f"/admin/helpdesk/{obj._meta.model_name}/{obj.pk}/change/"
        assert client_a.post(url, {"rating": "5", "text": "changed"}).status_code == 403
    mine.refresh_from_db()
    assert mine.rating == 4


def test_account_page_edits_auto_resolve_and_membership_capacity(account_a):
    root = staff_user(is_superuser=True)
    client = Client()
    client.force_login(root)
    person = staff_user()
    membership = MembershipFactory(account=account_a, user=person)
    page = client.get(f"/admin/helpdesk/account/{account_a.pk}/change/")
    html = page.content.decode()
    assert "Auto-resolve" in html and 'name="auto_resolve_ai_after_minutes"' in html
    assert 'name="memberships-0-availability"' in html and 'name="memberships-0-max_open_assignments"' in html
    data = admin_form_data(page) | {
        "auto_resolve_ai_after_minutes": "",
        "auto_resolve_waiting_after_hours": "72",
        "memberships-0-availability": "busy",
        "memberships-0-max_open_assignments": "3",
    }
    data.pop("memberships-0-email_notifications", None)
    response = client.post(f"/admin/helpdesk/account/{account_a.pk}/change/", data)
    assert response.status_code == 302, response.context and response.context["adminform"].form.errors
    account_a.refresh_from_db()
    membership.refresh_from_db()
    assert (
        account_a.auto_resolve_ai_after_minutes is None and account_a.auto_resolve_waiting_after_hours == 72
    )
    assert (membership.availability, membership.max_open_assignments) == ("busy", 3)
    assert membership.email_notifications is False


def test_whatsapp_inbox_settings_are_fields_with_errors_on_the_field(client_a, account_a):
    inbox = InboxFactory(
        account=account_a,
        channel_type="whatsapp",
        provider_config={"phone_number_id": "106540352242922", "verify_token": "tok"},
    )
    url = f"/admin/helpdesk/inbox/{inbox.pk}/change/"
    page = client_a.get(url)
    html = page.content.decode()
    assert "WhatsApp settings" in html and "Slack settings" not in html
    assert re.search(r'name="whatsapp_phone_number_id"[^>]*value="106540352242922"', html)
    assert "After resolution" in html and 'name="csat_survey_enabled"' in html

    data = admin_form_data(page) | {"whatsapp_phone_number_id": "../../me"}
    refused = client_a.post(url, data)
    assert refused.status_code == 200
    assert refused.context["adminform"].form.errors["whatsapp_phone_number_id"] == [
        "Must be the digits of Meta's phone number id."
    ]

    data |= {
        "whatsapp_phone_number_id": "999",
        "whatsapp_verify_token": "",
        "whatsapp_api_version": "v22.0",
        "after_resolution": "reopen",
        "csat_survey_enabled": "on",
    }
    saved = client_a.post(url, data)
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    inbox.refresh_from_db()
    # The emptied field removed its key (the channel's default applies); the others were written.
    assert inbox.provider_config == {"phone_number_id": "999", "api_version": "v22.0"}
    assert inbox.after_resolution == "reopen" and inbox.csat_survey_enabled is True


def test_keys_without_a_field_stay_in_the_json_box(client_a, account_a):
    inbox = InboxFactory(account=account_a, channel_type="slack", provider_config={"bot_user_id": "U1"})
    # A key written before the channel's list knew it (stored directly): shown, not dropped, and named clearly.
    Inbox.objects.filter(pk=inbox.pk).update(provider_config={"bot_user_id": "U1", "team_hint": "T9"})
    url = f"/admin/helpdesk/inbox/{inbox.pk}/change/"
    page = client_a.get(url)
    box = page.context["adminform"].form["provider_config"].value()
    assert "team_hint" in box and "bot_user_id" not in box
    response = client_a.post(url, admin_form_data(page))
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["provider_config"] == [
        'provider_config["team_hint"] is not a setting of this channel (known keys: bot_user_id, api_base_url, business_hours, time_zone, away_message).'
    ]
    inbox.refresh_from_db()
    assert inbox.provider_config == {"bot_user_id": "U1", "team_hint": "T9"}
