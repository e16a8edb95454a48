"""What a page may tell about its visitor: contact attributes the account defined (`setCustomAttributes`) and one
of the account's labels on the visitor's open conversation (`setLabel`); nothing else."""

from __future__ import annotations

import pytest

from helpdesk.channels.widget import visitor_token
from helpdesk.models import Contact, ContactInbox, Conversation, CustomAttributeDefinition, Label
from tests.helpdesk.channels_widget.support import call, new_visitor, send, widget_inbox

pytestmark = pytest.mark.django_db


@pytest.fixture
def inbox():
    inbox = widget_inbox()
    CustomAttributeDefinition.objects.create(
        account=inbox.account, applies_to="contact", key="plan", label="Plan", kind="text"
    )
    Label.objects.create(account=inbox.account, name="vip")
    return inbox


def test_defined_contact_attributes_are_stored_on_the_visitors_contact(client, inbox):
    token = new_visitor(client, inbox)

    response = call(client, "POST", inbox, "attributes", token=token, body={"attributes": {"plan": "gold"}})

    assert response.status_code == 200, response.content
    assert response.json() == {"custom_attributes": {"plan": "gold"}}
    (row,) = ContactInbox.objects.filter(inbox=inbox)
    assert row.contact.custom_attributes == {"plan": "gold"}


def test_an_attribute_the_account_did_not_define_is_refused_and_nothing_stored(client, inbox):
    token = new_visitor(client, inbox)
    send(client, inbox, token, "hi")
    response = call(
        client,
        "POST",
        inbox,
        "attributes",
        token=token,
        body={"attributes": {"plan": "gold", "is_admin": True}},
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_attributes"
    assert Contact.objects.get().custom_attributes == {}


def test_an_existing_label_goes_on_the_open_conversation_and_a_page_cannot_invent_one(client, inbox):
    token = new_visitor(client, inbox)
    assert call(client, "POST", inbox, "labels", token=token, body={"label": "vip"}).json() == {
        "added": False
    }
    send(client, inbox, token, "hi")

    assert call(client, "POST", inbox, "labels", token=token, body={"label": "vip"}).json() == {"added": True}
    assert call(client, "POST", inbox, "labels", token=token, body={"label": "free-stuff"}).json() == {
        "added": False
    }

    assert list(Conversation.objects.get().labels.values_list("name", flat=True)) == ["vip"]
    assert not Label.objects.filter(name="free-stuff").exists()


@pytest.mark.parametrize(
    ("operation", "body"),
    [("attributes", {"attributes": ["plan"]}), ("labels", {"label": ""}), ("labels", {"label": 7})],
)
def test_malformed_page_context_is_refused(client, inbox, operation, body):
    token = new_visitor(client, inbox)
    assert call(client, "POST", inbox, operation, token=token, body=body).status_code == 400


def test_page_context_needs_the_visitors_token(client, inbox):
    response = call(client, "POST", inbox, "attributes", body={"attributes": {"plan": "gold"}})
    assert response.status_code == 401
    assert Contact.objects.count() == 0


def test_the_pre_chat_form_names_the_anonymous_visitor(client, inbox):
    inbox.provider_config = {**inbox.provider_config, "prechat_fields": "name email"}
    inbox.save(update_fields=["provider_config"])
    session = call(client, "POST", inbox, "session").json()
    assert session["prechat"] == ["name", "email"]
    token = session["visitor_token"]

    response = call(
        client, "POST", inbox, "contact", token=token, body={"name": "Ann", "email": "ann@example.com"}
    )

    assert response.status_code == 200, response.content
    contact = ContactInbox.objects.get(inbox=inbox).contact
    assert (contact.name, contact.email) == ("Ann", "ann@example.com")


def test_the_pre_chat_form_refuses_a_bad_email_and_identified_visitors(client, inbox):
    token = new_visitor(client, inbox)
    bad = call(client, "POST", inbox, "contact", token=token, body={"email": "not-an-address"})
    assert (bad.status_code, bad.json()["error"]) == (400, "invalid_email")
    identified = visitor_token(inbox_id=inbox.pk, source_id="user:cust-1")
    refused = call(client, "POST", inbox, "contact", token=identified, body={"name": "Mallory"})
    assert (refused.status_code, refused.json()["error"]) == (409, "identified")
    assert not Contact.objects.filter(name="Mallory").exists()
