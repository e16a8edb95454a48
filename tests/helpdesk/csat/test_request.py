"""The rating request after resolution: when it is sent, what it is, and when it is not."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from captain.answering.models import CreditLedgerEntry
from helpdesk.channels.rating import RATING_CHOICES
from helpdesk.models import Conversation, CsatResponse, Delivery, Message
from helpdesk.services.conversations import conversation_set_status
from helpdesk.services.csat import DEFAULT_QUESTION, csat_request_after_resolution
from tests.factories import ConversationFactory

from .conftest import API_CONTACT, conversation_with_customer, outgoing_system, rating_request, resolve

pytestmark = pytest.mark.django_db


def test_resolving_queues_one_rating_request_from_the_helpdesk_at_no_cost(
    api_inbox, django_capture_on_commit_callbacks
):
    conversation = resolve(
        conversation_with_customer(api_inbox, API_CONTACT), django_capture_on_commit_callbacks
    )
    request = rating_request(conversation)
    assert request.content == DEFAULT_QUESTION
    assert request.quick_replies == list(RATING_CHOICES)
    assert not request.private
    assert Delivery.objects.get(pk=request.pk).status == Delivery.Status.QUEUED
    assert conversation.csat_requested_at == request.created_at
    assert conversation.status == Conversation.Status.RESOLVED
    assert CreditLedgerEntry.objects.count() == 0  # a system message, not an AI reply
    assert Message.objects.filter(
        conversation=conversation, content="The customer was asked to rate the conversation."
    ).exists()


def test_the_inbox_question_is_used_when_set(api_inbox, django_capture_on_commit_callbacks):
    api_inbox.csat_message = "Wie zufrieden waren Sie? Antworten Sie mit 1 bis 5."
    api_inbox.save()
    conversation = resolve(
        conversation_with_customer(api_inbox, API_CONTACT), django_capture_on_commit_callbacks
    )
    assert rating_request(conversation).content == "Wie zufrieden waren Sie? Antworten Sie mit 1 bis 5."


def test_no_request_when_the_inbox_does_not_ask(api_inbox, django_capture_on_commit_callbacks):
    api_inbox.csat_survey_enabled = False
    api_inbox.save()
    conversation = resolve(
        conversation_with_customer(api_inbox, API_CONTACT), django_capture_on_commit_callbacks
    )
    assert conversation.csat_requested_at is None
    assert not outgoing_system(conversation).exists()


def test_a_conversation_is_asked_once_however_often_it_is_resolved(
    api_inbox, django_capture_on_commit_callbacks
):
    conversation = resolve(
        conversation_with_customer(api_inbox, API_CONTACT), django_capture_on_commit_callbacks
    )
    conversation_set_status(conversation=conversation, status=Conversation.Status.OPEN, actor="Ann")
    resolve(conversation, django_capture_on_commit_callbacks)
    assert outgoing_system(conversation).count() == 1


def test_no_request_when_reopened_before_the_request_ran(api_inbox):
    conversation = conversation_with_customer(api_inbox, API_CONTACT)
    # Resolved and reopened again before the after-commit work ran (callbacks not executed here).
    conversation_set_status(conversation=conversation, status=Conversation.Status.RESOLVED, actor="The AI")
    conversation_set_status(conversation=conversation, status=Conversation.Status.OPEN, actor="Ann")
    assert csat_request_after_resolution(conversation_id=conversation.pk) is None
    assert not outgoing_system(conversation).exists()


def test_no_request_for_an_already_rated_or_customerless_conversation(api_inbox):
    rated = conversation_with_customer(api_inbox, API_CONTACT)
    Conversation.objects.filter(pk=rated.pk).update(status=Conversation.Status.RESOLVED)
    CsatResponse.objects.create(account_id=rated.account_id, conversation=rated, rating=5)
    silent = ConversationFactory(contact_inbox__inbox=api_inbox, status=Conversation.Status.RESOLVED)
    assert csat_request_after_resolution(conversation_id=rated.pk) is None
    assert csat_request_after_resolution(conversation_id=silent.pk) is None
    assert csat_request_after_resolution(conversation_id=10**9) is None


def test_a_request_is_recorded_with_its_time(api_inbox):
    conversation = conversation_with_customer(api_inbox, API_CONTACT)
    Conversation.objects.filter(pk=conversation.pk).update(status=Conversation.Status.RESOLVED)
    before = timezone.now()
    request = csat_request_after_resolution(conversation_id=conversation.pk)
    conversation.refresh_from_db()
    assert request is not None
    assert before - timedelta(seconds=1) <= conversation.csat_requested_at <= timezone.now()
