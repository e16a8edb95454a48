"""The small model's blanket refusal ("我无法协助完成这个请求") to a question its sources answer is asked
once more, with the evidence and the question in the customer's language; refused again, the customer gets an
honest handoff (or the sentence that clearly answers), never the refusal. The model is the scripted
OpenAI-compatible server over real HTTP, so each test knows exactly what the model said and reads what it was
asked the second time."""

from __future__ import annotations

import numpy as np
import pytest

from captain.runtime import OpenAIChatModel, Runner, make_openai_client
from captain.runtime.knowledge.answerer import KnowledgeAnswerer, KnowledgeSettings
from captain.runtime.knowledge.refusals import blanket_refusal
from captain.runtime.knowledge.sources import Retrieval, Source
from captain.runtime.promises import HONEST_HANDOFF
from captain.runtime.types import Agent, HumanHandoff, Reply, RunContext
from tests.support.fake_llm_server import FakeLLMServer, last_user_message, text

WORDS = ("退货", "14", "return", "days", "配送", "delivery")


def encode(texts: list[str]) -> np.ndarray:
    vectors = np.array([[t.lower().count(w) + 0.01 for w in WORDS] for t in texts], dtype=float)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


RETURNS_ZH = Source(
    "document", "chunk:1", "退货政策", "自收货之日起 14 天内，未拆封的产品可以退货。配送通常需要 3 个工作日。"
)
RETURNS_EN = Source(
    "document", "chunk:2", "Returns", "Unopened products can be returned within 14 days of delivery."
)
REFUSAL_ZH = "抱歉，我无法协助完成这个请求。"
QUESTION_ZH = "买了东西多久内可以退货？"


class Base:
    def __init__(self, *sources: Source) -> None:
        self.sources = sources

    def retrieve(self, query: str, *, context: str = "", limit: int = 4) -> Retrieval:
        return Retrieval(query=query, sources=self.sources, best_score=0.7)


def answer(server: FakeLLMServer, base: Base, question: str, *, reask: bool = True, handoff: bool = True):
    client = OpenAIChatModel(make_openai_client(server.base_url, None, timeout=5, max_retries=0))
    agent = Agent(key="triage", name="Triage", instructions="You answer customers of Kelvo.", model="m")
    answerer = KnowledgeAnswerer(
        runner=Runner(client),
        agents={"triage": agent},
        context=RunContext(account_id=1, conversation_id=None),
        base=base,
        settings=KnowledgeSettings(
            company="Kelvo", faq_answer_score=None, refusal_reask=reask, refusal_handoff=handoff
        ),
        encode=encode,
    )
    result = answerer("triage", [{"role": "user", "content": question}])
    return result, answerer.steps[-1]


def test_a_refusal_is_asked_again_with_the_evidence_and_the_question_in_chinese_and_the_answer_is_sent():
    with FakeLLMServer([text(REFUSAL_ZH), text("自收货之日起 14 天内可以退货。")]) as server:
        result, step = answer(server, Base(RETURNS_ZH), QUESTION_ZH)
        asked_again = last_user_message(server.requests[1])
    assert isinstance(result.outcome, Reply) and result.outcome.text == "自收货之日起 14 天内可以退货。"
    assert len(server.requests) == 2 and step.refusals == 1
    # Evidence first and short, then the question, then the instruction in the customer's language.
    assert (
        asked_again.index("自收货之日起 14 天内")
        < asked_again.index(QUESTION_ZH)
        < asked_again.index("用中文回答")
    )
    assert result.usage.requests == 2, "both calls are counted"


def test_refused_twice_the_customer_gets_an_honest_handoff_never_the_refusal():
    # An English source for a Chinese question: no sentence in the customer's language to send as written.
    with FakeLLMServer([text(REFUSAL_ZH), text(REFUSAL_ZH)]) as server:
        result, step = answer(server, Base(RETURNS_EN), QUESTION_ZH)
    assert isinstance(result.outcome, HumanHandoff)
    assert result.outcome.customer_message == HONEST_HANDOFF["zh"]
    assert step.action == "refusal_handoff" and step.refusals == 2 and len(server.requests) == 2


def test_a_refusal_as_the_rewrite_of_a_refused_reply_is_not_sent_either():
    # The first reply states a value no source has; told so, the model declines: the customer gets a person.
    with FakeLLMServer([text("可以在 30 天内退货。"), text(REFUSAL_ZH)]) as server:
        result, step = answer(server, Base(RETURNS_EN), QUESTION_ZH)
    assert isinstance(result.outcome, HumanHandoff)
    assert result.outcome.customer_message == HONEST_HANDOFF["zh"]
    assert step.action == "grounding_handoff" and step.refusals == 1 and len(server.requests) == 2


def test_an_english_refusal_is_asked_again_in_english():
    with FakeLLMServer(
        [text("I'm sorry, but I can't assist with that."), text("You can return it within 14 days.")]
    ) as server:
        result, _ = answer(server, Base(RETURNS_EN), "how many days do I have to return something?")
        asked_again = last_user_message(server.requests[1])
    assert isinstance(result.outcome, Reply) and result.outcome.text == "You can return it within 14 days."
    assert "in English" in asked_again and "within 14 days of delivery" in asked_again


def test_with_both_settings_off_the_refusal_is_sent_as_before():
    with FakeLLMServer([text(REFUSAL_ZH)]) as server:
        result, step = answer(server, Base(RETURNS_ZH), QUESTION_ZH, reask=False, handoff=False)
    assert isinstance(result.outcome, Reply) and result.outcome.text == REFUSAL_ZH
    assert len(server.requests) == 1 and step.refusals == 0


def test_by_default_a_refusal_is_not_asked_again_but_handed_to_a_person_honestly():
    # The defaults: no re-ask (it was not better on the held-out set), and the refusal is never sent. Not the
    # evidence sentence either, though one here would answer: after a refusal it was as often a wrong one.
    defaults = KnowledgeSettings()
    assert (defaults.refusal_reask, defaults.refusal_handoff) == (False, True)
    with FakeLLMServer([text(REFUSAL_ZH)]) as server:
        result, step = answer(server, Base(RETURNS_ZH), QUESTION_ZH, reask=False)
    assert isinstance(result.outcome, HumanHandoff)
    assert result.outcome.customer_message == HONEST_HANDOFF["zh"]
    assert "declined" in result.outcome.reason
    assert len(server.requests) == 1 and (step.refusals, step.action) == (1, "refusal_handoff")


def test_by_default_an_answer_is_still_sent():
    with FakeLLMServer([text("自收货之日起 14 天内，未拆封的产品可以退货。")]) as server:
        result, step = answer(server, Base(RETURNS_ZH), QUESTION_ZH, reask=False)
    assert isinstance(result.outcome, Reply) and step.refusals == 0


def test_a_no_about_what_the_sources_discuss_is_an_answer_not_a_refusal():
    reply = "抱歉，已拆封的产品无法协助退货。"
    with FakeLLMServer([text(reply)]) as server:
        result, step = answer(server, Base(RETURNS_ZH), "拆封了还能退货吗？")
    assert len(server.requests) == 1 and step.refusals == 0
    assert isinstance(result.outcome, Reply) and result.outcome.text == reply


@pytest.mark.parametrize(
    ("reply", "refusal"),
    [
        (REFUSAL_ZH, True),
        ("I'm sorry, but I can't assist with that.", True),
        ("Sorry, I can't help with that. Would you like me to connect you with a member of our team?", True),
        ("对不起，我不能帮你完成这个要求。", True),
        ("抱歉，我无法提供您所要求的信息。", True),
        ("I'm sorry, but I can't provide that information.", True),
        # Declines about something the sources discuss: an answer.
        ("Sorry, we can't help with returns after 14 days.", False),
        ("我们无法协助您办理退货。", False),
        # "I don't know" and the product's own fixed texts are honest, not refusals.
        ("I don't know, would you like me to connect you with a person?", False),
        ("抱歉，我没有找到这方面的信息。需要为您转接人工客服吗？", False),
        (HONEST_HANDOFF["en"], False),
        # A refusal with an answer after it is an answer.
        ("抱歉，我无法协助完成这个请求。未拆封的产品 14 天内可以退货。", False),
    ],
)
def test_a_blanket_refusal_is_the_refusal_wording_sharing_no_word_with_the_sources(reply: str, refusal: bool):
    assert blanket_refusal(reply, [f"{s.title}\n{s.text}" for s in (RETURNS_ZH, RETURNS_EN)]) is refusal
