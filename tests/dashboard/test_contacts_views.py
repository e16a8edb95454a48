"""The contacts pages: list and search, a contact's page, edit, merge, CSV export and import; tenants and bad input."""

from __future__ import annotations

import csv
import io

from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from helpdesk.models import Contact, Conversation, CustomAttributeDefinition, PersonSettings
from helpdesk.services.contacts import contact_phone
from tests.factories import ContactFactory, ContactInboxFactory, ConversationFactory

from .conftest import count_queries


def _flash(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def _url(name: str, team, *args) -> str:
    return reverse(f"dashboard:{name}", args=[team.account.pk, *args])


def test_list_searches_by_name_email_and_phone(agent_client, team, other_team):
    ContactFactory(account=team.account, name="Ann Lee", email="ann@shop.test")
    ContactFactory(account=team.account, name="Bob", phone="+44 20 7946 0000")
    ContactFactory(account=other_team.account, name="Ann Elsewhere")
    page = agent_client.get(_url("contacts", team), {"q": "ann"}).content.decode()
    assert "Ann Lee" in page and "Bob" not in page and "Elsewhere" not in page
    page = agent_client.get(_url("contacts", team), {"q": "7946"}).content.decode()
    assert "Bob" in page and "Ann Lee" not in page


def test_list_pages_by_25_in_a_fixed_number_of_queries(agent_client, team):
    for n in range(30):
        ContactFactory(account=team.account, name=f"Person {n:02}")
    first = agent_client.get(_url("contacts", team)).content.decode()
    assert "Page 1 of 2" in first and "Person 29" in first and "Person 04" not in first
    second = agent_client.get(_url("contacts", team), {"page": "2"}).content.decode()
    assert "Person 04" in second
    queries, _ = count_queries(lambda: agent_client.get(_url("contacts", team)))
    ContactFactory.create_batch(20, account=team.account)
    assert count_queries(lambda: agent_client.get(_url("contacts", team)))[0] == queries


def test_a_10000_character_search_is_refused_with_a_message(agent_client, team):
    response = agent_client.get(_url("contacts", team), {"q": "%" * 10_000})
    assert response.status_code == 200
    assert "Search for at most 200 characters (got 10,000)" in response.content.decode()


def test_a_search_with_a_nul_character_or_like_wildcards_answers_a_page(agent_client, team):
    ContactFactory(account=team.account, name="Ann")
    for query in ("\x00ann", "%", "_", "ann' OR 1=1 --"):
        response = agent_client.get(_url("contacts", team), {"q": query})
        assert response.status_code == 200
        assert ("Ann" in response.content.decode()) is (query == "\x00ann")


def test_another_accounts_contact_is_a_404_on_every_page(agent_client, team, other_team):
    foreign = ContactFactory(account=other_team.account, name="Theirs")
    assert agent_client.get(_url("contact-detail", team, foreign.pk)).status_code == 404
    assert agent_client.post(_url("contact-edit", team, foreign.pk), {"name": "Mine"}).status_code == 404
    assert agent_client.post(_url("contact-merge", team, foreign.pk), {"duplicate": "1"}).status_code == 404
    other_url = reverse("dashboard:contacts", args=[other_team.account.pk])
    assert agent_client.get(other_url).status_code == 404
    foreign.refresh_from_db()
    assert foreign.name == "Theirs"


def test_contact_page_shows_the_contact_and_their_conversations(agent_client, team):
    contact = ContactFactory(account=team.account, name="Ann", phone="+1 555 0100")
    conversation = ConversationFactory(contact_inbox=ContactInboxFactory(inbox=team.inbox, contact=contact))
    ContactFactory(account=team.account, name="Ann")
    page = agent_client.get(_url("contact-detail", team, contact.pk)).content.decode()
    assert 'value="+1 555 0100"' in page
    assert f'data-conversation="{conversation.pk}"' in page
    assert "data-duplicate=" in page  # the other "Ann" is offered for merging


def test_edit_saves_fields_and_attributes(agent_client, team):
    CustomAttributeDefinition.objects.create(
        account=team.account, applies_to="contact", key="plan", label="Plan", kind="text"
    )
    contact = ContactFactory(account=team.account, name="Ann")
    response = agent_client.post(
        _url("contact-edit", team, contact.pk),
        {"name": "Ann Lee", "email": "ann@x.test", "phone": "+49 30 1234", "attr_plan": "pro"},
    )
    assert response.status_code == 302
    contact.refresh_from_db()
    assert (contact.name, contact.email, contact_phone(contact)) == ("Ann Lee", "ann@x.test", "+49 30 1234")
    assert contact.custom_attributes["plan"] == "pro"
    assert _flash(response) == ["Contact saved."]


def test_edit_with_a_bad_value_saves_nothing_and_says_why(agent_client, team):
    CustomAttributeDefinition.objects.create(
        account=team.account, applies_to="contact", key="seats", label="Seats", kind="number"
    )
    contact = ContactFactory(account=team.account, name="Ann")
    response = agent_client.post(
        _url("contact-edit", team, contact.pk), {"name": "Changed", "email": "", "attr_seats": "many"}
    )
    assert response.status_code == 302
    assert _flash(response)[0].startswith("Nothing saved: seats:")
    contact.refresh_from_db()
    assert contact.name == "Ann"


def test_merge_moves_the_duplicates_conversations(agent_client, team):
    kept = ContactFactory(account=team.account, name="Ann")
    duplicate = ContactFactory(account=team.account, name="Ann L")
    conversation = ConversationFactory(contact_inbox=ContactInboxFactory(inbox=team.inbox, contact=duplicate))
    response = agent_client.post(_url("contact-merge", team, kept.pk), {"duplicate": f"#{duplicate.pk}"})
    assert response.status_code == 302
    conversation.refresh_from_db()
    assert conversation.contact_id == kept.pk
    assert not Contact.objects.filter(pk=duplicate.pk).exists()
    assert _flash(response) == [f"Merged Ann L (#{duplicate.pk}) into this contact."]


def test_merge_naming_another_accounts_contact_is_refused(agent_client, team, other_team):
    kept = ContactFactory(account=team.account)
    foreign = ContactFactory(account=other_team.account)
    conversation = ConversationFactory(
        contact_inbox=ContactInboxFactory(inbox=other_team.inbox, contact=foreign)
    )
    response = agent_client.post(_url("contact-merge", team, kept.pk), {"duplicate": str(foreign.pk)})
    assert _flash(response) == [
        f"No contact #{foreign.pk} in this account: only contacts of one account can be merged."
    ]
    assert Conversation.objects.get(pk=conversation.pk).contact_id == foreign.pk


def test_merge_with_garbage_or_itself_says_so(agent_client, team):
    kept = ContactFactory(account=team.account)
    response = agent_client.post(_url("contact-merge", team, kept.pk), {"duplicate": "9" * 5000})
    assert "Give the duplicate's contact number" in _flash(response)[0]
    response = agent_client.post(_url("contact-merge", team, kept.pk), {"duplicate": str(kept.pk)})
    # [-1]: the first refusal is still stored (no page was rendered between the two posts).
    assert _flash(response)[-1] == "Not merged: A contact cannot be merged into itself: pick the duplicate."


def test_export_is_csv_the_import_reads_back_with_formulas_defused(admin_client, team):
    ContactFactory(account=team.account, name="=HYPERLINK(1)", email="a@x.test", phone="+1 555")
    response = admin_client.get(_url("contacts-export", team))
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows == [["name", "email", "phone"], ["'=HYPERLINK(1)", "a@x.test", "'+1 555"]]
    upload = SimpleUploadedFile("c.csv", response.content, content_type="text/csv")
    imported = admin_client.post(_url("contacts-import", team), {"file": upload})
    assert _flash(imported) == ["Imported: 0 new contact(s), 1 updated."]
    contact = Contact.objects.get(account=team.account)
    assert (contact.name, contact_phone(contact)) == ("=HYPERLINK(1)", "+1 555")


def test_import_with_bad_rows_lists_each_line_and_imports_nothing(admin_client, team):
    upload = SimpleUploadedFile("c.csv", b"name,email\nAnn,ann@x.test\nBob,nope\n,\nCid,also bad\n")
    response = admin_client.post(_url("contacts-import", team), {"file": upload})
    messages = _flash(response)
    assert messages[0] == "Nothing imported: fix these and try again."
    assert [m.split(":")[0] for m in messages[1:]] == ["Line 3", "Line 5"]
    assert not Contact.objects.filter(account=team.account).exists()


def test_import_without_a_file_says_so(admin_client, team):
    response = admin_client.post(_url("contacts-import", team))
    assert _flash(response) == ["Choose a CSV file to import."]


def test_export_and_import_are_for_administrators(agent_client, team):
    assert agent_client.get(_url("contacts-export", team)).status_code == 403
    upload = SimpleUploadedFile("c.csv", b"name\nAnn\n")
    assert agent_client.post(_url("contacts-import", team), {"file": upload}).status_code == 403
    assert not Contact.objects.filter(account=team.account).exists()


def test_a_chinese_person_is_told_about_merges_imports_and_notes_in_chinese(
    agent_client, admin_client, team, other_team
):
    PersonSettings.objects.create(user=team.agent, language="zh-hans")
    PersonSettings.objects.create(user=team.admin, language="zh-hans")
    kept, foreign = ContactFactory(account=team.account), ContactFactory(account=other_team.account)
    response = agent_client.post(_url("contact-merge", team, kept.pk), {"duplicate": str(foreign.pk)})
    assert _flash(response) == [f"此账户中没有联系人 #{foreign.pk}：只能合并同一账户的联系人。"]
    response = agent_client.post(_url("contact-note-add", team, kept.pk), {"content": "Prefers e-mail."})
    assert _flash(response)[-1] == "备注已添加。"  # the refusal above is still unread in the session
    assert _flash(admin_client.post(_url("contacts-import", team)))[-1] == "请选择要导入的 CSV 文件。"
    upload = SimpleUploadedFile("c.csv", b"name,email\nBob,nope\nBob,bob@x.test\nCid,bob@x.test\n")
    told = _flash(admin_client.post(_url("contacts-import", team), {"file": upload}))
    assert told[-3:] == [
        "未导入任何内容：请修正以下问题后重试。",
        "第 2 行：email: “nope”不是有效的电子邮件地址。",
        "第 4 行：电子邮件 bob@x.test 在第 3 行也出现了。",
    ]
