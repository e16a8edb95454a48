"""The conversation page's conveniences: the "/" canned-response picker, the contact panel, reply vs note in
the composer, one-click actions answered as htmx fragments (and still as redirects without JavaScript), and
snooze with wake-up times in the account's time zone. Everything scoped to the account."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

import pytest

from helpdesk.models import CannedResponse, Conversation, Label
from helpdesk.views.snooze import snooze_until
from tests.factories import ContactInboxFactory, ConversationFactory, MessageFactory

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def page(team, conversation, suffix: str = "") -> str:
    return f"/app/accounts/{team.account.id}/conversations/{conversation.id}/{suffix}"


# ---- canned responses ------------------------------------------------------------------------------------------


def test_picker_fills_placeholders_and_ranks_short_codes_first(agent_client, team):
    conversation = ConversationFactory(
        contact_inbox__inbox=team.inbox, contact_inbox__contact__name="Dana", status="open"
    )
    team.agent.first_name, team.agent.last_name = "Bob", "Builder"
    team.agent.save()
    CannedResponse.objects.create(
        account=team.account, short_code="thanks", content="Thanks {{contact.name}}! {{agent.name}} {{x}}"
    )
    CannedResponse.objects.create(account=team.account, short_code="bye", content="Thanks for writing")
    data = agent_client.get(page(team, conversation, "canned-responses/"), {"q": "than"}).json()
    assert [r["short_code"] for r in data["results"]] == ["thanks", "bye"]
    # Plain substitution: known placeholders filled, anything else left as written (no template engine).
    assert data["results"][0]["content"] == "Thanks Dana! Bob Builder {{x}}"
    everything = agent_client.get(page(team, conversation, "canned-responses/")).json()
    assert [r["short_code"] for r in everything["results"]] == ["bye", "thanks"]


def test_picker_never_shows_another_accounts_canned_responses(agent_client, team, other_team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    CannedResponse.objects.create(account=other_team.account, short_code="secret", content="Their text")
    assert agent_client.get(page(team, conversation, "canned-responses/"), {"q": "secret"}).json() == {
        "results": []
    }
    theirs = ConversationFactory(contact_inbox__inbox=other_team.inbox)
    url = f"/app/accounts/{team.account.id}/conversations/{theirs.id}/canned-responses/"
    assert agent_client.get(url).status_code == 404
    url = f"/app/accounts/{other_team.account.id}/conversations/{theirs.id}/canned-responses/"
    assert agent_client.get(url).status_code == 404


# ---- contact panel -------------------------------------------------------------------------------------------


def test_contact_panel_shows_profile_channel_ids_and_past_conversations(agent_client, team, other_team):
    link = ContactInboxFactory(
        inbox=team.inbox, contact__name="Dana", contact__email="dana@example.com", source_id="chat-42"
    )
    current = ConversationFactory(contact_inbox=link, status="open")
    past = ConversationFactory(contact_inbox=link, status="resolved")
    MessageFactory(conversation=past, content="My <b>invoice</b> is wrong")
    MessageFactory(
        conversation=past, content="A teammate is coming.", message_type="outgoing", sender_type="assistant"
    )
    # Not the contact's, or (a corrupt row) another tenant's pointing at the contact: neither is listed.
    stranger = ConversationFactory(contact_inbox__inbox=team.inbox)
    foreign = ConversationFactory(contact_inbox__inbox=other_team.inbox)
    Conversation.objects.filter(pk=foreign.pk).update(contact=link.contact)

    html = agent_client.get(page(team, current)).content.decode()
    panel = html[html.index('id="contact-panel"') :]
    assert "Dana" in panel and "dana@example.com" in panel and "chat-42" in panel
    listed = re.findall(r'data-past-conversation="(\d+)"', panel)
    assert listed == [str(past.id)]
    assert str(stranger.id) not in listed and str(foreign.id) not in listed
    # The customer's last words (escaped), not the bot's handoff text.
    assert "My &lt;b&gt;invoice&lt;/b&gt; is wrong" in panel and "A teammate is coming." not in panel
    assert "Resolved" in panel


def test_contact_panel_names_the_files_of_a_past_message_of_files_alone(agent_client, team):
    link = ContactInboxFactory(inbox=team.inbox, contact__name="Dana")
    current = ConversationFactory(contact_inbox=link, status="open")
    photo = ConversationFactory(contact_inbox=link, status="resolved")
    files = [{"file_name": "broken-lid.jpg", "type": "image"}, {"type": "file"}]
    MessageFactory(conversation=photo, content="", attachments=files)
    worded = ConversationFactory(contact_inbox=link, status="resolved")
    MessageFactory(conversation=worded, content="Here is the receipt", attachments=[{"file_name": "r.pdf"}])

    html = agent_client.get(page(team, current)).content.decode()
    panel = html[html.index('id="contact-panel"') :]
    photo_row = panel[panel.index(f'data-past-conversation="{photo.id}"') :].split("</li>", 1)[0]
    # As the conversation list's preview: by name, else by kind; a message with words shows its words.
    assert "“📎 broken-lid.jpg, 📎 file”" in photo_row
    worded_row = panel[panel.index(f'data-past-conversation="{worded.id}"') :].split("</li>", 1)[0]
    assert "“Here is the receipt”" in worded_row and "r.pdf" not in worded_row


def test_first_conversation_says_so(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox)
    assert b"first conversation" in agent_client.get(page(team, conversation)).content


# ---- composer -------------------------------------------------------------------------------------------------


def test_composer_has_reply_and_note_looks_and_canned_url(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    html = agent_client.get(page(team, conversation)).content.decode()
    assert "Private note — the customer will not see this" in html
    assert '<span class="when-reply">Send reply</span><span class="when-note">Add note</span>' in html
    assert (
        f'data-canned-url="/app/accounts/{team.account.id}/conversations/{conversation.id}/canned-responses/"'
        in html
    )
    assert "vendor/htmx.min.js" in html and "helpdesk/conversation.js" in html
    assert "<script>" not in html  # the CSP allows no inline script


# ---- one-click actions ----------------------------------------------------------------------------------------


def test_htmx_action_answers_the_side_panel_and_status_out_of_band(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="pending")
    response = agent_client.post(page(team, conversation, "status/take_over/"), **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<aside class="side-panel" id="side-panel"') or 'id="side-panel"' in html
    assert re.search(
        r'<span class="status status-open" id="status" data-status="open" hx-swap-oob="true">', html
    )
    assert 'id="escalation" hx-swap-oob="true"' in html
    assert "You took over the conversation from the AI." in html
    assert 'data-action="hand_back"' in html and 'data-action="take_over"' not in html
    conversation.refresh_from_db()
    assert conversation.status == "open" and conversation.assignee_id == team.agent.id
    # Without htmx the same form still works: flash message and redirect.
    plain = agent_client.post(page(team, conversation, "status/resolve/"))
    assert plain.status_code == 302 and plain["Location"].endswith(page(team, conversation))


def test_htmx_assignee_priority_labels(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    html = agent_client.post(page(team, conversation, "assignee/"), {"assignee": team.admin.id}, **HTMX)
    assert "Assigned to alice." in html.content.decode()
    html = agent_client.post(page(team, conversation, "priority/"), {"priority": "urgent"}, **HTMX)
    assert 'value="urgent" selected' in html.content.decode()
    html = agent_client.post(page(team, conversation, "labels/"), {"name": "vip"}, **HTMX).content.decode()
    assert '<span class="badge label">vip' in html
    conversation.refresh_from_db()
    assert (conversation.assignee_id, conversation.priority) == (team.admin.id, "urgent")
    assert list(conversation.labels.values_list("name", flat=True)) == ["vip"]
    bad = agent_client.post(
        page(team, conversation, "labels/"), {"name": "two words"}, **HTMX
    ).content.decode()
    assert 'class="action-result error"' in bad and Label.objects.filter(name="two words").count() == 0


def test_htmx_action_on_another_accounts_conversation_is_404(agent_client, team, other_team):
    theirs = ConversationFactory(contact_inbox__inbox=other_team.inbox, status="pending")
    url = f"/app/accounts/{team.account.id}/conversations/{theirs.id}/status/resolve/"
    assert agent_client.post(url, **HTMX).status_code == 404
    theirs.refresh_from_db()
    assert theirs.status == "pending"


# ---- snooze ---------------------------------------------------------------------------------------------------

BERLIN = ZoneInfo("Europe/Berlin")


def test_snooze_times_are_the_accounts_morning():
    # Wednesday 2031-01-01 23:30 in Berlin (22:30 UTC).
    now = dt.datetime(2031, 1, 1, 22, 30, tzinfo=dt.UTC)
    assert snooze_until("hour", now=now, zone=BERLIN) == now + dt.timedelta(hours=1)
    assert snooze_until("tomorrow", now=now, zone=BERLIN) == dt.datetime(2031, 1, 2, 9, 0, tzinfo=BERLIN)
    assert snooze_until("monday", now=now, zone=BERLIN) == dt.datetime(2031, 1, 6, 9, 0, tzinfo=BERLIN)
    # On a Monday, "next Monday" is a week later.
    monday = dt.datetime(2031, 1, 6, 10, 0, tzinfo=BERLIN)
    assert snooze_until("monday", now=monday, zone=BERLIN) == dt.datetime(2031, 1, 13, 9, 0, tzinfo=BERLIN)
    assert snooze_until("custom", now=now, zone=BERLIN, custom="2031-02-03T14:15") == dt.datetime(
        2031, 2, 3, 14, 15, tzinfo=BERLIN
    )
    assert snooze_until("custom", now=now, zone=BERLIN, custom="2030-02-03T14:15") is None  # in the past
    assert snooze_until("custom", now=now, zone=BERLIN, custom="soon") is None
    assert snooze_until("someday", now=now, zone=BERLIN) is None


def test_snooze_action_sets_status_and_wake_up_time(agent_client, team):
    team.account.time_zone = "Europe/Berlin"
    team.account.save(update_fields=["time_zone"])
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    response = agent_client.post(
        page(team, conversation, "status/snooze/"),
        {"until": "custom", "custom_at": "2031-02-03T14:15"},
        **HTMX,
    )
    html = response.content.decode()
    assert response.status_code == 200 and "Snoozed until Mon 03 Feb, 14:15 (Europe/Berlin)." in html
    assert 'data-status="snoozed"' in html and "Wake up now" in html
    conversation.refresh_from_db()
    assert conversation.status == Conversation.Status.SNOOZED
    assert conversation.snoozed_until == dt.datetime(2031, 2, 3, 14, 15, tzinfo=BERLIN)
    assert conversation.messages.filter(message_type="activity", content__contains="snoozed").exists()
    listed = agent_client.get(f"/app/accounts/{team.account.id}/lists/snoozed/").content.decode()
    assert f'data-conversation="{conversation.id}"' in listed and "Mon 3 Feb, 14:15" in listed


def test_snooze_in_the_past_is_refused(agent_client, team):
    conversation = ConversationFactory(contact_inbox__inbox=team.inbox, status="open")
    response = agent_client.post(
        page(team, conversation, "status/snooze/"), {"until": "custom", "custom_at": "2001-01-01T09:00"}
    )
    assert response.status_code == 302
    conversation.refresh_from_db()
    assert conversation.status == "open" and conversation.snoozed_until is None
