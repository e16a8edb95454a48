"""helpdesk.services.contacts and the contacts selectors: edit, merge, CSV import; the refusals each name what is wrong."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from helpdesk.models import Contact, ContactInbox, Conversation, CustomAttributeDefinition, Message
from helpdesk.selectors.contacts import contacts_matching, possible_duplicates
from helpdesk.services.contacts import (
    ContactImportError,
    contact_merge,
    contact_phone,
    contact_update,
    contacts_import_csv,
)
from tests.factories import ContactFactory, ContactInboxFactory, ConversationFactory, InboxFactory


def test_update_sets_name_email_and_phone(team):
    contact = ContactFactory(account=team.account, name="Ann")
    contact_update(contact=contact, name=" Ann Lee ", email="ANN@Example.com", phone="+49 151 234")
    contact.refresh_from_db()
    assert (contact.name, contact.email, contact_phone(contact)) == (
        "Ann Lee",
        "ann@example.com",
        "+49 151 234",
    )


def test_update_refuses_bad_fields_naming_each_and_stores_nothing(team):
    contact = ContactFactory(account=team.account, name="Ann")
    with pytest.raises(ValidationError) as caught:
        contact_update(contact=contact, name="x" * 201, email="not-mail", phone="call me")
    assert set(caught.value.message_dict) == {"name", "email", "phone"}
    contact.refresh_from_db()
    assert contact.name == "Ann"


def test_empty_phone_removes_it(team):
    contact = ContactFactory(account=team.account, phone="+1 555 0100", custom_attributes={"plan": "pro"})
    contact_update(contact=contact, phone="")
    contact.refresh_from_db()
    assert contact.phone == "" and contact.custom_attributes == {"plan": "pro"}


def test_merge_moves_conversations_and_channel_ids_and_records_an_activity_line(team):
    kept = ContactFactory(account=team.account, name="Ann", email="")
    duplicate = ContactFactory(account=team.account, name="Ann L", email="ann@example.com")
    conversation = ConversationFactory(contact_inbox=ContactInboxFactory(inbox=team.inbox, contact=duplicate))
    ConversationFactory(contact_inbox=ContactInboxFactory(inbox=team.inbox, contact=kept))

    contact_merge(kept=kept, duplicate=duplicate, actor="alice")

    assert not Contact.objects.filter(pk=duplicate.pk).exists()
    assert Conversation.objects.filter(contact=kept).count() == 2
    assert ContactInbox.objects.filter(contact=kept).count() == 2
    kept.refresh_from_db()
    assert (kept.name, kept.email) == ("Ann", "ann@example.com")  # only the empty field is filled
    line = Message.objects.get(conversation=conversation, message_type=Message.Type.ACTIVITY)
    assert line.content == f"alice merged contact Ann L (#{duplicate.pk}) into Ann (#{kept.pk})."
    assert line.private is False or line.sender_type == Message.SenderType.SYSTEM


def test_merge_across_accounts_is_refused_and_moves_nothing(team, other_team):
    kept = ContactFactory(account=team.account)
    foreign = ContactFactory(account=other_team.account)
    conversation = ConversationFactory(
        contact_inbox=ContactInboxFactory(inbox=other_team.inbox, contact=foreign)
    )
    with pytest.raises(ValidationError, match="different accounts"):
        contact_merge(kept=kept, duplicate=foreign, actor="alice")
    conversation.refresh_from_db()
    assert conversation.contact_id == foreign.pk
    assert Contact.objects.filter(pk=foreign.pk).exists()


def test_merge_into_itself_is_refused(team):
    contact = ContactFactory(account=team.account)
    with pytest.raises(ValidationError, match="itself"):
        contact_merge(kept=contact, duplicate=contact, actor="alice")
    assert Contact.objects.filter(pk=contact.pk).exists()


def test_search_finds_by_name_email_phone_and_id_only_in_the_account(team, other_team):
    ann = ContactFactory(account=team.account, name="Ann Lee", email="ann@shop.test")
    bob = ContactFactory(account=team.account, name="Bob", phone="+44 20 7946")
    ContactFactory(account=other_team.account, name="Ann Other")
    assert list(contacts_matching(account_id=team.account.pk, query="ann")) == [ann]
    assert list(contacts_matching(account_id=team.account.pk, query="SHOP.test")) == [ann]
    assert list(contacts_matching(account_id=team.account.pk, query="7946")) == [bob]
    assert list(contacts_matching(account_id=team.account.pk, query=f"#{bob.pk}")) == [bob]
    assert list(contacts_matching(account_id=team.account.pk, query="9" * 40)) == []
    assert list(contacts_matching(account_id=team.account.pk, query="%_" + "x" * 10_000)) == []


def test_possible_duplicates_share_a_name_email_or_phone(team, other_team):
    ann = ContactFactory(account=team.account, name="Ann", email="ann@x.test")
    same_mail = ContactFactory(account=team.account, name="A. Lee", email="ANN@x.test")
    ContactFactory(account=team.account, name="Zed")
    ContactFactory(account=other_team.account, name="Ann")
    assert possible_duplicates(contact=ann) == [same_mail]


# ---- CSV import --------------------------------------------------------------------------------------------------


def test_import_creates_contacts_and_updates_the_one_with_the_same_email(team):
    existing = ContactFactory(account=team.account, name="Old name", email="ann@x.test")
    CustomAttributeDefinition.objects.create(
        account=team.account, applies_to="contact", key="plan", label="Plan", kind="text"
    )
    data = b"name,email,phone,plan\nAnn Lee,Ann@X.test,,pro\nBob,bob@x.test,+1 555 0100,\n\n"
    result = contacts_import_csv(account_id=team.account.pk, data=data)
    assert (result.created, result.updated) == (1, 1)
    existing.refresh_from_db()
    assert (existing.name, existing.custom_attributes) == ("Ann Lee", {"plan": "pro"})
    bob = Contact.objects.get(account=team.account, email="bob@x.test")
    assert contact_phone(bob) == "+1 555 0100"


def test_import_with_bad_rows_names_each_line_and_stores_nothing(team):
    data = (
        b'name,email,phone\nGood,good@x.test,\n"Multi\nline",bad-mail,\n,,\nNo one,,letters\n'
        b"Dup,good@x.test,\nToo,many,values,here\n"
    )
    with pytest.raises(ContactImportError) as caught:
        contacts_import_csv(account_id=team.account.pk, data=data)
    errors = caught.value.errors
    assert [e.split(":")[0] for e in errors] == ["Line 3", "Line 6", "Line 8", "Line 7"]
    assert "is not an e-mail address" in errors[0]
    assert "is not a phone number" in errors[1]
    assert "4 values for 3 columns" in errors[2]
    assert "good@x.test is on line 2 too" in errors[3]
    assert not Contact.objects.filter(account=team.account).exists()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "The file is empty"),
        (b"name,email\n", "no contacts"),
        (b"name,shoe size\nAnn,42\n", "unknown column(s) 'shoe size'"),
        (b"plan\npro\n", "unknown column"),
        ("name\nAnn\n".encode("utf-16"), "not UTF-8"),
        (b"name\nAnn\nB\x00b\n", "Line 3: a NUL character"),
        (b'name\nAnn\n"Bob\n', "Line 3: not readable as CSV"),
    ],
)
def test_import_refuses_unreadable_files_with_a_message(team, data, message):
    with pytest.raises(ContactImportError) as caught:
        contacts_import_csv(account_id=team.account.pk, data=data)
    assert message in " ".join(caught.value.errors)
    assert not Contact.objects.filter(account=team.account).exists()


def test_import_refuses_an_attribute_value_of_the_wrong_kind(team):
    CustomAttributeDefinition.objects.create(
        account=team.account, applies_to="contact", key="seats", label="Seats", kind="number"
    )
    with pytest.raises(ContactImportError) as caught:
        contacts_import_csv(account_id=team.account.pk, data=b"name,seats\nAnn,12\nBob,many\n")
    assert caught.value.errors[0].startswith("Line 3: seats:")
    assert not Contact.objects.filter(account=team.account).exists()


def test_import_matches_emails_only_in_its_own_account(team, other_team):
    foreign = ContactFactory(account=other_team.account, name="Theirs", email="ann@x.test")
    InboxFactory(account=other_team.account)
    result = contacts_import_csv(account_id=team.account.pk, data=b"name,email\nAnn,ann@x.test\n")
    assert (result.created, result.updated) == (1, 0)
    foreign.refresh_from_db()
    assert foreign.name == "Theirs"
