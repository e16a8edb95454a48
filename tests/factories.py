"""factory_boy factories for the helpdesk and captain models."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from captain.answering.models import CreditBalance, ReplyJob
from captain.assistants.models import Assistant, AssistantInbox, Scenario
from captain.knowledge.models import FaqEntry
from helpdesk.models import Account, Contact, ContactInbox, Conversation, Delivery, Inbox, Membership, Message


class AccountFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Account

    name = factory.Sequence(lambda n: f"Account {n}")


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.django.Password("pass-word-123")


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    account = factory.SubFactory(AccountFactory)
    user = factory.SubFactory(UserFactory)
    role = Membership.Role.AGENT


class InboxFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Inbox

    account = factory.SubFactory(AccountFactory)
    name = factory.Sequence(lambda n: f"Inbox {n}")
    channel_type = Inbox.ChannelType.API
    secret = "test-secret"
    callback_url = "http://127.0.0.1:9/callback"


class ContactFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Contact

    account = factory.SubFactory(AccountFactory)
    name = factory.Sequence(lambda n: f"Customer {n}")


class ContactInboxFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ContactInbox

    inbox = factory.SubFactory(InboxFactory)
    contact = factory.SubFactory(ContactFactory, account=factory.SelfAttribute("..inbox.account"))
    source_id = factory.Sequence(lambda n: f"contact-{n}")


class ConversationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Conversation

    contact_inbox = factory.SubFactory(ContactInboxFactory)
    inbox = factory.SelfAttribute("contact_inbox.inbox")
    account = factory.SelfAttribute("contact_inbox.inbox.account")
    contact = factory.SelfAttribute("contact_inbox.contact")
    status = Conversation.Status.PENDING


class MessageFactory(factory.django.DjangoModelFactory):
    """`reply_job=ReplyJob.Status.PENDING` also gives the message captain's job row (what ingest does for a
    message the AI answers); `delivery=Delivery.Status.QUEUED` its outbox row, other fields as
    `delivery__provider_message_id=...`."""

    class Meta:
        model = Message
        skip_postgeneration_save = True

    conversation = factory.SubFactory(ConversationFactory)
    account = factory.SelfAttribute("conversation.account")
    inbox = factory.SelfAttribute("conversation.inbox")
    message_type = Message.Type.INCOMING
    sender_type = Message.SenderType.CONTACT
    content = "Hello"

    @factory.post_generation
    def reply_job(message: Message, create: bool, status: str | None, **fields: object) -> None:
        if create and status:
            ReplyJob.objects.create(
                message=message,
                conversation_id=message.conversation_id,
                account_id=message.account_id,
                status=status,
                created_at=message.created_at,
                **fields,
            )

    @factory.post_generation
    def delivery(message: Message, create: bool, status: str | None, **fields: object) -> None:
        if create and status:
            Delivery.objects.create(message=message, status=status, created_at=message.created_at, **fields)


class AssistantFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Assistant

    account = factory.SubFactory(AccountFactory)
    name = "Captain"
    product_name = "Acme Shop"
    handoff_message = "A teammate will take it from here."


class AssistantInboxFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AssistantInbox

    assistant = factory.SubFactory(AssistantFactory)
    inbox = factory.SubFactory(InboxFactory, account=factory.SelfAttribute("..assistant.account"))


class ScenarioFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Scenario

    assistant = factory.SubFactory(AssistantFactory)
    title = factory.Sequence(lambda n: f"Scenario {n}")
    key = factory.Sequence(lambda n: f"scenario_{n}")
    description = "Questions about refunds"
    instruction = "Help the customer get a refund."
    tools = factory.LazyFunction(lambda: ["faq_lookup"])


class FaqEntryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = FaqEntry

    assistant = factory.SubFactory(AssistantFactory)
    account = factory.SelfAttribute("assistant.account")
    question = "How long does a refund take?"
    answer = "Refunds reach your card within 5 business days."


class CreditBalanceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CreditBalance

    account = factory.SubFactory(AccountFactory)
    limit = 100


class CreditLedgerEntryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "captain.CreditLedgerEntry"

    message = factory.SubFactory(
        MessageFactory, message_type=Message.Type.OUTGOING, sender_type=Message.SenderType.ASSISTANT
    )
    account = factory.SelfAttribute("message.account")
    kind = "ai_reply"
    amount = 1
    agent_key = "assistant"


class RunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "captain.Run"

    conversation = factory.SubFactory(ConversationFactory)
    account = factory.SelfAttribute("conversation.account")
    outcome = "reply"
    start_agent_key = "assistant"
    end_agent_key = "assistant"
    route = factory.LazyFunction(lambda: ["assistant"])
    llm_calls = 1
    trace_id = factory.Sequence(lambda n: f"{n:032x}")


def _now():
    from django.utils import timezone

    return timezone.now()


class SpanRecordFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "captain.SpanRecord"

    trace_id = factory.Sequence(lambda n: f"{n:032x}")
    span_id = factory.Sequence(lambda n: f"{n:016x}")
    name = "captain.run"
    start_time = factory.LazyFunction(_now)
    end_time = factory.SelfAttribute("start_time")
    attributes = factory.LazyFunction(dict)
