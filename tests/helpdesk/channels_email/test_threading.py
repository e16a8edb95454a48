"""Threading (helpdesk.channels.email.threading) through Mailgun's inbound route: a customer's reply from Gmail,
Outlook or Apple Mail lands in the conversation it answers by In-Reply-To/References, even when the customer has a
newer one open; a reply without headers finds it by the signed reply address; a new or forwarded mail, a forged
token, another customer's Message-ID or another tenant's token starts a new conversation and touches nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from helpdesk.channels.email.threading import reply_address, token_conversation
from helpdesk.models import Conversation, Inbox, Message
from helpdesk.services.messages import message_create_agent_reply
from tests.factories import UserFactory
from tests.helpdesk.channels_email.support import email_inbox, post, signed_fields
from tests.helpdesk.channels_email.test_mime import FIXTURES, fixture

pytestmark = pytest.mark.django_db

FROM = "help@shop.example"


def thread_fixture(name: str, **values: object) -> bytes:
    raw = (FIXTURES / "threads" / f"{name}.eml").read_bytes()
    for key, value in values.items():
        raw = raw.replace(f"{{{{{key}}}}}".encode(), str(value).encode())
    return raw


def deliver(client, inbox: Inbox, raw: bytes) -> Message:
    response = post(client, inbox, signed_fields(raw))
    assert response.status_code == 200, response.content
    return Message.objects.get(pk=response.json()["message_ids"][0])


def answered_conversation(client, inbox: Inbox, *, n: int, subject: str) -> tuple[Conversation, Message]:
    """A first mail of Ann's and an agent's reply to it: (the conversation, our reply)."""
    first = deliver(client, inbox, thread_fixture("first_mail", N=n, SUBJECT=subject))
    reply = message_create_agent_reply(
        conversation=first.conversation, user=UserFactory(), content="Your parcel left our warehouse today."
    )
    return first.conversation, reply


@pytest.fixture
def inbox() -> Inbox:
    return email_inbox()


@pytest.fixture
def two_conversations(client, inbox):
    """Ann's parcel conversation and, newer and also open, her invoice conversation."""
    parcel, reply = answered_conversation(client, inbox, n=1, subject="Where is my parcel")
    invoice, _ = answered_conversation(client, inbox, n=2, subject="Invoice needed")
    assert parcel.id != invoice.id
    return parcel, reply, invoice


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("gmail_reply_to_us", "Thanks! Can you send it to my office instead?"),
        ("outlook_reply_to_us", "The office address is Main Street 5."),
        ("apple_reply_to_us", "Perfect, thank you."),
    ],
)
def test_a_reply_lands_in_the_conversation_it_answers_not_the_newest_open_one(
    client, inbox, two_conversations, name, text
):
    parcel, reply, invoice = two_conversations

    # Sent to the plain support address: only the headers can thread it.
    message = deliver(client, inbox, thread_fixture(name, REPLY_ID=reply.id, REPLY_TO=FROM))

    assert message.conversation_id == parcel.id
    assert message.content == text
    assert Conversation.objects.count() == 2
    assert (
        not invoice.messages.filter(message_type=Message.Type.INCOMING)
        .exclude(provider_message_id="<CAF=first-2@mail.gmail.com>")
        .exists()
    )


def test_references_find_the_thread_when_in_reply_to_names_a_mail_we_never_saw(
    client, inbox, two_conversations
):
    parcel, _, _ = two_conversations
    raw = thread_fixture("gmail_reply_to_us", REPLY_ID=999_999, REPLY_TO=FROM).replace(
        b"In-Reply-To: <helpdesk-reply-999999@shop.example>", b"In-Reply-To: <lost-1@elsewhere.example>"
    )
    assert deliver(client, inbox, raw).conversation_id == parcel.id


def test_a_reply_without_headers_finds_its_conversation_by_the_signed_reply_address(
    client, inbox, two_conversations
):
    parcel, _, _ = two_conversations
    address = reply_address(FROM, inbox_id=inbox.id, conversation_id=parcel.id)
    assert address.startswith("help+c") and address.endswith("@shop.example")

    message = deliver(client, inbox, thread_fixture("webmail_no_headers", REPLY_TO=address))

    assert message.conversation_id == parcel.id


@pytest.mark.parametrize(
    "forge",
    [
        lambda inbox, parcel: f"help+c{parcel.id}-{'0' * 24}@shop.example",  # a guessed signature
        # A real signature moved to another conversation id.
        lambda inbox, parcel: reply_address(FROM, inbox_id=inbox.id, conversation_id=parcel.id).replace(
            f"+c{parcel.id}-", f"+c{parcel.id + 1}-"
        ),
        lambda inbox, parcel: f"help+c{parcel.id}@shop.example",  # no signature at all
    ],
)
def test_a_forged_reply_token_starts_a_new_conversation(client, inbox, two_conversations, forge):
    parcel, _, invoice = two_conversations
    message = deliver(client, inbox, thread_fixture("webmail_no_headers", REPLY_TO=forge(inbox, parcel)))

    assert message.conversation_id not in {parcel.id, invoice.id}
    assert Conversation.objects.count() == 3
    assert message.conversation.subject == "my parcel again"


def test_another_tenants_token_and_message_id_never_reach_their_conversation(client, inbox):
    other = email_inbox()
    assert other.account_id != inbox.account_id
    theirs, their_reply = answered_conversation(client, other, n=1, subject="Where is my parcel")
    their_address = reply_address(FROM, inbox_id=other.id, conversation_id=theirs.id)
    assert token_conversation(inbox.id, [their_address]) is None  # the signature names the inbox too
    before = theirs.messages.count()

    by_token = deliver(client, inbox, thread_fixture("webmail_no_headers", REPLY_TO=their_address))
    by_header = deliver(
        client, inbox, thread_fixture("gmail_reply_to_us", REPLY_ID=their_reply.id, REPLY_TO=FROM)
    )

    assert by_token.conversation.inbox_id == by_header.conversation.inbox_id == inbox.id
    assert by_token.conversation_id != by_header.conversation_id  # each a new conversation of its own
    assert theirs.messages.count() == before


def test_another_customers_reply_headers_do_not_thread_into_their_conversation(
    client, inbox, two_conversations
):
    parcel, reply, _ = two_conversations
    address = reply_address(FROM, inbox_id=inbox.id, conversation_id=parcel.id)
    raw = thread_fixture("gmail_reply_to_us", REPLY_ID=reply.id, REPLY_TO=address).replace(
        b"Ann Lee <ann.lee@gmail.com>", b"Mallory <mallory@evil.example>"
    )

    message = deliver(client, inbox, raw)

    assert message.conversation_id != parcel.id
    assert message.conversation.contact.email == "mallory@evil.example"
    assert not parcel.messages.filter(sender_contact=message.sender_contact).exists()


def test_a_forwarded_mail_starts_a_new_conversation_even_with_one_open(client, inbox):
    dan_first = deliver(client, inbox, fixture("apple_mail").replace(b"carla@icloud.com", b"dan@example.org"))
    forwarded = deliver(client, inbox, fixture("forwarded"))
    assert forwarded.conversation_id != dan_first.conversation_id
    assert forwarded.conversation.subject == "Fwd: Invoice 2211"


@pytest.mark.parametrize(
    ("after_resolution", "same"), [(Inbox.AfterResolution.REOPEN, True), (Inbox.AfterResolution.NEW, False)]
)
def test_a_reply_to_a_resolved_thread_follows_the_inboxs_reopen_setting(
    client, inbox, after_resolution, same
):
    Inbox.objects.filter(pk=inbox.pk).update(after_resolution=after_resolution)
    parcel, reply = answered_conversation(client, inbox, n=1, subject="Where is my parcel")
    Conversation.objects.filter(pk=parcel.pk).update(status=Conversation.Status.RESOLVED)

    message = deliver(client, inbox, thread_fixture("apple_reply_to_us", REPLY_ID=reply.id, REPLY_TO=FROM))

    assert (message.conversation_id == parcel.id) is same
    parcel.refresh_from_db()
    assert parcel.status == (Conversation.Status.OPEN if same else Conversation.Status.RESOLVED)


@given(
    conversation_id=st.integers(min_value=1, max_value=10**12),
    signature=st.text(alphabet="0123456789abcdef", min_size=24, max_size=24),
)
@hsettings(max_examples=200, deadline=None, derandomize=True, database=None)
def test_no_guessed_signature_names_a_conversation(conversation_id, signature):
    real = reply_address(FROM, inbox_id=7, conversation_id=conversation_id)
    guessed = f"help+c{conversation_id}-{signature}@shop.example"
    assert token_conversation(7, [real]) == conversation_id
    assert token_conversation(8, [real]) is None  # the same token for another inbox
    assert token_conversation(7, [guessed]) == (conversation_id if guessed == real else None)


@given(addresses=st.lists(st.text(max_size=120), max_size=5))
@hsettings(max_examples=200, deadline=None, derandomize=True, database=None)
def test_arbitrary_recipient_text_is_read_without_error_and_names_no_conversation(addresses):
    assert token_conversation(7, addresses) is None
