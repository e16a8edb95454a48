"""The grounding check's named words with `everyday_words` on (off by default: docs/knowledge.md, "Everyday
words"): an everyday word that is merely rare in one help centre ("address", "地址") does not on its own tie a value
to the question; a word rare in the language ("rabies", "狂犬") still does. And (on by default) a
sentence in another language than the question, which cannot share its words, is weighed by the encoder against a
rival sentence that does.

Real wordfreq lists; no model; a stand-in encoder where the encoder's view is what is tested."""

from __future__ import annotations

import numpy as np

from captain.runtime.knowledge.claims import turn_check
from captain.runtime.knowledge.conflicts import required_named
from captain.runtime.knowledge.everyday import is_everyday, zipf

WHERE = ("Where is the Kelvo Service Centre?", "21 Tai Seng Drive, #03-08, Singapore 535223.")
REPAIRS = ("Repairs", "# Repairs out of warranty\n\nDiagnosis at the service centre costs S$35.")
WHERE_ZH = ("服务中心在哪里？", "大成道21号03-08室。")
REPAIRS_ZH = ("维修", "# 过保维修\n\n服务中心检测费S$35。")
NEUTERING = ("How much does neutering cost?", "Cats: ¥680 for a male, ¥1,280 for a female.")
CONSULT = ("Consultations", "# Consultation fees\n\nA consultation with a vet costs ¥150.")
# How many of a help centre's 86 passages hold each word: "address" and "regular" in one or two, as in a help
# centre that says "Where is ...?" and "consultation" instead.
COUNTS = {
    "service": 18,
    "centre": 14,
    "address": 2,
    "regular": 1,
    "check": 23,
    "vet": 40,
    "服务": 18,
    "中心": 14,
    "地址": 2,
    "洗碗": 2,
    "碗机": 2,
}


def check(
    question: str,
    sources: list[tuple[str, str]],
    *,
    language: str = "en",
    everyday: bool | None = True,
    encode=None,
):
    return turn_check(
        conversation=[question],
        instructions=[],
        sources=sources,
        question=question,
        language=language,
        encode=encode,
        sentence_support=None,
        term_passages=COUNTS,
        passages=86,
        everyday_words=everyday,
    )


def test_everyday_and_rare_words_in_english_and_chinese():
    for word in ("address", "whole", "putting", "summer", "地址", "公司"):
        assert is_everyday(word), (word, zipf(word))
    for word in ("rabies", "dishwasher", "microchip", "locker", "certificate", "狂犬", "洗碗机", "储值卡"):
        assert not is_everyday(word), (word, zipf(word))
    # A name no general list holds is as rare as a word can be.
    assert zipf("sentosa") == 0.0


def test_a_value_from_a_source_that_says_an_everyday_word_otherwise_passes():
    # The answer to "whats the service centre address" is an FAQ entry titled "Where is ...?": "address" is in two
    # of the help centre's passages, so it was read as the thing named and the address refused as off topic.
    question = "whats the service centre address"
    reply = "It is at 21 Tai Seng Drive, #03-08, Singapore 535223."
    assert check(question, [WHERE, REPAIRS]).findings(reply) == []
    before = check(question, [WHERE, REPAIRS], everyday=False).findings(reply)
    assert [f.problem for f in before] == ["wrong_context"] * 3


def test_the_same_in_chinese():
    question = "服务中心地址在哪里"
    reply = "服务中心在大成道21号03-08室。"
    assert check(question, [WHERE_ZH, REPAIRS_ZH], language="zh").findings(reply) == []
    before = check(question, [WHERE_ZH, REPAIRS_ZH], language="zh", everyday=False).findings(reply)
    assert {f.problem for f in before} == {"wrong_context"}


def test_an_everyday_word_the_reply_repeats_still_ties_its_value():
    # "The regular check-up costs ¥1,280" says the neutering price is for a regular check-up: the sentence it
    # came from must be about that, as before.
    question = "How much for a regular check up with the vet?"
    findings = check(question, [NEUTERING, CONSULT]).findings("A regular check-up costs ¥1,280.")
    assert [f.problem for f in findings] == ["wrong_context"]
    assert required_named(
        frozenset({"regular"}), frozenset({"regular"}), "A regular check-up costs ¥1,280."
    ) == {"regular"}
    assert required_named(frozenset({"regular"}), frozenset({"regular"}), "It costs ¥1,280.") == frozenset()
    # A word rare in the language is required whether the reply repeats it or not.
    assert required_named(frozenset({"rabies", "whole"}), frozenset({"whole"}), "It costs ¥1,600.") == {
        "rabies"
    }


def _encode(texts: list[str]) -> np.ndarray:
    """Stand-in encoder: installation texts point one way, repair texts another, in either language."""
    rows = [
        [
            1.0 if ("install" in t.lower() or "安装" in t) else 0.1,
            1.0 if ("维修" in t or "repair" in t) else 0.1,
            0.1,
        ]
        for t in texts
    ]
    vectors = np.array(rows, dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_an_answer_in_another_language_is_weighed_by_the_encoder_against_a_rival_sharing_words():
    # The English FAQ answer cannot share a word with "洗碗机安装费多少钱"; the Chinese repair-fee sentence shares
    # "洗碗机". The words alone made the repair fee "clearly more about the question" and refused the right price.
    english = (
        "How much is dishwasher installation?",
        "Standard installation of the Swift DW60 dishwasher costs S$80.",
    )
    repairs = ("过了保修期维修怎么收费？", "服务中心检测费 S$35，洗碗机上门维修每次 S$65。")
    question = "洗碗机安装费多少钱"
    assert (
        check(question, [english, repairs], language="zh", everyday=None, encode=_encode).findings(
            "标准安装费 S$80。"
        )
        == []
    )
    # Where the encoder agrees the rival is closer, the value is still from the wrong context.
    wrong = check(question, [english, repairs], language="zh", everyday=None, encode=_sharing)
    assert [f.problem for f in wrong.findings("标准安装费 S$80。")] == ["wrong_context"]


def _sharing(texts: list[str]) -> np.ndarray:
    """Stand-in encoder that finds the texts sharing "洗碗机" alike, as the words do."""
    rows = [[1.0 if "洗碗机" in t else 0.1, 0.1 if "洗碗机" in t else 1.0] for t in texts]
    vectors = np.array(rows, dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
