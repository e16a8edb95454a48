"""Credits are held before the model is called: a run that cannot pay never calls the (paid) model, a hold
becomes the charge when the AI replies and is given back otherwise. Real HTTP to the scripted model server."""

from __future__ import annotations

import pytest

from captain.answering.models import CreditBalance, CreditLedgerEntry, CreditReservation, ReplyJob, Run
from captain.answering.services.credits import credit_holds_release_finished, credit_release, credit_reserve
from captain.answering.services.jobs import jobs_finish
from captain.answering.services.runs import run_for_message
from helpdesk.models import Conversation, Message
from tests.factories import AssistantInboxFactory, ConversationFactory, CreditBalanceFactory, MessageFactory
from tests.support.fake_llm_server import error, text

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def account_with(redis_url, llm_settings):
    """An assistant on an inbox whose account has `limit` credits; returns a maker of pending messages."""

    def make(limit: int):
        link = AssistantInboxFactory()
        CreditBalanceFactory(account=link.assistant.account, limit=limit)

        def pending(content: str = "Hello?") -> Message:
            conversation = ConversationFactory(contact_inbox__inbox=link.inbox)
            return MessageFactory(
                conversation=conversation, content=content, reply_job=ReplyJob.Status.PENDING
            )

        return link.assistant.account, pending

    return make


def test_a_run_that_cannot_hold_its_price_never_calls_the_model(account_with, llm_settings):
    """The last credit is held by a run in progress (another worker, mid-model-call). Before holds existed this
    run saw 1 credit left, called the model, and then failed the debit: a paid call and a handoff anyway."""
    account, pending = account_with(limit=1)
    in_flight = pending()
    assert credit_reserve(account_id=account.id, message_id=in_flight.id, amount=1)

    second = pending()
    assert run_for_message(message_id=second.id) == "human_handoff"

    assert llm_settings.requests == []
    assert "credit limit" in Run.objects.get().detail
    assert Conversation.objects.get(pk=second.conversation_id).status == Conversation.Status.OPEN


def test_a_reply_turns_its_hold_into_the_charge(account_with, llm_settings):
    account, pending = account_with(limit=5)
    llm_settings.push(text("Here you are."))
    assert run_for_message(message_id=pending().id) == "reply"
    assert CreditBalance.objects.get(account=account).used == 1
    assert CreditLedgerEntry.objects.get().amount == 1
    assert not CreditReservation.objects.exists()


def test_a_failed_run_gives_its_hold_back(account_with, llm_settings):
    account, pending = account_with(limit=1)
    llm_settings.push(error(500))
    assert run_for_message(message_id=pending().id) == "error"
    assert not CreditReservation.objects.exists()
    assert CreditBalance.objects.get(account=account).used == 0
    # ...so the one credit is still there for the next customer.
    llm_settings.push(text("Fine now."))
    assert run_for_message(message_id=pending().id) == "reply"
    assert CreditBalance.objects.get(account=account).used == 1


def test_a_retried_attempt_keeps_its_first_hold(account_with):
    account, pending = account_with(limit=1)
    message = pending()
    assert credit_reserve(account_id=account.id, message_id=message.id, amount=1)
    # The worker was killed; the task's next attempt reserves again for the same message.
    assert credit_reserve(account_id=account.id, message_id=message.id, amount=1)
    assert CreditReservation.objects.count() == 1
    assert not credit_reserve(account_id=account.id, message_id=pending().id, amount=1)


def test_holds_of_finished_messages_are_released_by_the_sweeper(account_with):
    account, pending = account_with(limit=2)
    done, waiting = pending(), pending()
    credit_reserve(account_id=account.id, message_id=done.id, amount=1)
    credit_reserve(account_id=account.id, message_id=waiting.id, amount=1)
    jobs_finish(message_ids=[done.pk], status=ReplyJob.Status.DONE)

    assert credit_holds_release_finished() == 1
    assert list(CreditReservation.objects.values_list("message_id", flat=True)) == [waiting.id]
    assert credit_release(message_ids=[waiting.id]) == 1


def test_a_deleted_message_takes_its_hold_with_it(account_with):
    account, pending = account_with(limit=1)
    message = pending()
    credit_reserve(account_id=account.id, message_id=message.id, amount=1)
    message.conversation.delete()
    assert credit_reserve(account_id=account.id, message_id=pending().id, amount=1)
