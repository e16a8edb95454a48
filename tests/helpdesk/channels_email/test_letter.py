"""A reply as a letter (helpdesk.channels.email.letter): the inbox's greeting and sign-off around the text, the
AI's own salutation and closing left out where the inbox has its own (never a person's words), and no sentence of
the reply lost; Hypothesis-fuzzed like the other parsers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from helpdesk.channels.email.letter import letter_text

GREETING, SIGN_OFF = "Hello {name},", "Best regards,\nShop Support"


def ai_letter(text: str, **kwargs: str) -> str:
    options = {"name": "Ann", "greeting": GREETING, "sign_off": SIGN_OFF, **kwargs}
    return letter_text(text, written_by_ai=True, **options)


@pytest.mark.parametrize(
    "reply",
    [
        "Hi Ann,\n\nYour parcel left today.\n\nBest regards,\nThe shop team",
        "Dear Ann Lee,\nYour parcel left today.\nKind regards,\nAlex\nShop Support",
        "Hello there!\n\nYour parcel left today.\n\nCheers",
        "Your parcel left today.\n\nThanks!",
    ],
)
def test_the_ais_own_salutation_and_closing_give_way_to_the_inboxs(reply):
    assert ai_letter(reply) == "Hello Ann,\n\nYour parcel left today.\n\nBest regards,\nShop Support\n"


def test_chinese_salutation_and_closing_too():
    reply = "您好，\n您的包裹今天已发出。\n祝好"
    assert ai_letter(reply) == "Hello Ann,\n\n您的包裹今天已发出。\n\nBest regards,\nShop Support\n"


@pytest.mark.parametrize(
    "reply",
    [
        "Hello, your parcel left today.",  # a salutation word inside the first sentence
        "Thank you for waiting, the parcel left today.",
        "Best prices are on our website.",
    ],
)
def test_sentences_that_only_start_like_a_salutation_or_closing_stay(reply):
    assert reply in ai_letter(reply)


def test_without_inbox_greeting_or_sign_off_the_ais_own_stay():
    reply = "Hi Ann,\n\nYour parcel left today.\n\nBest regards,\nThe shop team"
    assert ai_letter(reply, greeting="", sign_off="") == reply + "\n"


def test_a_persons_reply_is_sent_as_typed():
    reply = "Hi Ann,\n\nYour parcel left today.\n\nBest,\nMia"
    letter = letter_text(reply, name="Ann", greeting=GREETING, sign_off=SIGN_OFF, written_by_ai=False)
    assert letter == f"Hello Ann,\n\n{reply}\n\nBest regards,\nShop Support\n"


def test_a_customer_without_a_name_is_greeted_all_the_same():
    assert ai_letter("It left.", name="").startswith("Hello there,\n\nIt left.")


@hsettings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(max_size=80), max_size=8).map("\n".join),
    st.text(max_size=40),
    st.text(max_size=40),
    st.booleans(),
)
def test_any_reply_becomes_a_letter_and_keeps_its_middle(reply, greeting, sign_off, by_ai):
    letter = letter_text(reply, name="Ann", greeting=greeting, sign_off=sign_off, written_by_ai=by_ai)
    assert letter.endswith("\n")
    lines = reply.strip().splitlines()
    # Only a first and the last three lines can be taken: everything between is always sent.
    for line in lines[1:-3]:
        assert line in letter
