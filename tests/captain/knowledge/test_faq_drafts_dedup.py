"""The duplicate threshold of FAQ drafts, measured with the real encoder on EN/EN and EN/ZH pairs, and the parser
of small models' answers. Run with `-s` to see the scores (the report of the threshold choice quotes them)."""

from __future__ import annotations

import pytest

from captain.knowledge.services.faq_draft_pairs import DUPLICATE_SIMILARITY, Deduplicator, Pair, parse_pairs
from captain.knowledge.services.retrieval import get_encoder

SHIP = ("How long does shipping take?", "Orders arrive in 3 to 5 business days.")
PASSWORD = (
    "How do I reset my password?",
    "Click 'Forgot password' on the sign-in page and follow the e-mail.",
)
RETURNS = ("Can I return an item I bought?", "Yes, within 30 days with the receipt.")
HOURS = ("What are your opening hours?", "We are open 9:00 to 18:00, Monday to Friday.")

SAME = [
    (SHIP, ("How many days until my order arrives?", "Delivery takes 3-5 business days.")),
    (
        PASSWORD,
        ("I forgot my password, how can I change it?", "Use the Forgot password link on the login page."),
    ),
    (
        RETURNS,
        ("What is your return policy?", "Items can be returned within 30 days if you have the receipt."),
    ),
    (SHIP, ("运送需要多长时间？", "订单在3到5个工作日内送达。")),
    (PASSWORD, ("如何重置密码？", "在登录页面点击“忘记密码”，然后按照邮件操作。")),
]
DIFFERENT = [
    (SHIP, ("How much does shipping cost?", "Shipping is free over 50 euros, otherwise 4.90 euros.")),
    (PASSWORD, ("How do I delete my account?", "Write to support and we delete it within 7 days.")),
    (
        ("运送需要多长时间？", "订单在3到5个工作日内送达。"),
        ("运费是多少？", "满50欧元免运费，否则4.90欧元。"),
    ),
    (RETURNS, ("Can I exchange an item for another size?", "Yes, exchanges are free within 30 days.")),
    (HOURS, ("Are you open on public holidays?", "No, we are closed on public holidays.")),
]


def score(a: tuple[str, str], b: tuple[str, str]) -> float:
    va, vb = get_encoder().encode([Pair(*a).text, Pair(*b).text])
    return float(va @ vb)


@pytest.mark.parametrize(("known", "draft"), SAME, ids=[d[0] for _, d in SAME])
def test_paraphrases_in_english_and_chinese_are_duplicates(known, draft):
    similarity = score(known, draft)
    print(f"same      {similarity:.3f}  {known[0]} | {draft[0]}")
    assert similarity >= DUPLICATE_SIMILARITY
    assert not Deduplicator([Pair(*known).text]).keep(Pair(*draft))


@pytest.mark.parametrize(("known", "draft"), DIFFERENT, ids=[d[0] for _, d in DIFFERENT])
def test_different_questions_on_the_same_topic_are_kept(known, draft):
    similarity = score(known, draft)
    print(f"different {similarity:.3f}  {known[0]} | {draft[0]}")
    assert similarity < DUPLICATE_SIMILARITY
    assert Deduplicator([Pair(*known).text]).keep(Pair(*draft))


@pytest.mark.parametrize(
    ("content", "questions"),
    [
        ('[{"question": "Is it free?", "answer": "Yes."}]', ["Is it free?"]),
        ('```json\n[{"Question": "Is it free?", "Answer": "Yes."}]\n```', ["Is it free?"]),
        ('Here you go: {"question": "Is it free?", "answer": "Yes."} Thanks!', ["Is it free?"]),
        ('{"pairs": [{"q": "Is it free?", "a": "Yes."}]}', ["Is it free?"]),
        ('[{"question": "Is it free?", "answer": "Yes."}, {"question": "Is it', ["Is it free?"]),
        (
            '[{"question": "Is it free?", "answer": "Yes."}, {"question": "Is it free?", "answer": "Yes."}]',
            ["Is it free?"],
        ),
        ('[{"question": "Hi", "answer": "Yes."}, {"question": null, "answer": "x"}, "text", 3]', []),
        ("no json here", []),
        (None, []),
    ],
)
def test_parse_pairs_takes_what_it_can_and_never_raises(content, questions):
    assert [p.question for p in parse_pairs(content)] == questions
