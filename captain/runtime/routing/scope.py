"""Triage's own job: messages about a topic none of the assistant's scenarios covers.

Evidence (`calibration`) says how far a message is above what a content-free message scores against a text. A
question on a topic the assistant has no scenario for is still a topical question: it sits well above the noise
for any scenario of a related business (attractions for a hotel desk's restaurant scenario, a sports event for a
travel desk's sightseeing one), so the best scenario reached the floor and triage lost the message. Nothing in a
title and a description says what a scenario is *not* about.

So triage's own evidence includes everyday requests across many kinds of business (`BACKGROUND`, EN and ZH, the
product's own, the same in every configuration) that none of the assistant's scenarios covers: a request counts
as covered when its evidence for some scenario reaches `RoutingThresholds.scope_cover`, i.e. it would be routed
there with room to spare. A message whose evidence for those uncovered requests beats its best scenario by
`scope_margin` stays with triage. The uncovered requests are worked out once per set of scenario texts.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from threading import Lock

import numpy as np

from .calibration import TOP_TEXTS, Calibrator
from .scoring import Encoder

# Written as a broad list of what people ask any help desk, not from any one assistant's scenarios. A request
# that one of the assistant's scenarios covers drops out for that assistant.
# fmt: off
BACKGROUND: tuple[str, ...] = (
    # travel and getting around
    "book me a flight", "find a hotel room for tonight", "I need to rent a car", "buy a train ticket",
    "bus tickets to the city", "call me a taxi", "what tourist attractions are worth visiting?",
    "how do I get there by subway?", "what's the weather forecast for tomorrow?",
    "is it going to rain this weekend?",
    # food
    "find a restaurant nearby", "book a table for two tonight", "give me a recipe for pancakes",
    "how many calories are in this?", "order food delivery",
    # going out and media
    "tickets for a concert", "what films are showing at the cinema?", "play a song", "recommend a good book",
    "any sports games this weekend?", "museum opening hours",
    # home, health and services
    "find a dentist near me", "book a doctor's appointment", "I need a therapist", "find a hairdresser",
    "apartments for rent in the city", "a plumber to fix a leak", "set an alarm for 7 am",
    "add a meeting to my calendar", "send a message to my friend",
    # money and shopping
    "check my bank balance", "transfer money to a friend", "pay my electricity bill", "I lost my credit card",
    "apply for a loan", "track my parcel", "return an item I bought", "change my mobile phone plan",
    "my internet is not working", "buy insurance for my car",
    # work and study
    "request a day off", "when is payday?", "enrol in a course", "job vacancies",
    # general knowledge and chit-chat
    "what time is it in Tokyo?", "translate this sentence into French", "tell me a joke",
    "what is the capital of Australia?", "how do I convert miles to kilometres?",
    "who won the football match yesterday?", "what's your favourite colour?",
    # the assistant itself: who it is and what it can do is triage's to answer, whoever is in charge
    "who are you?", "what's your name?", "are you a robot?", "who made you?", "what can you help me with?",
    "how are you today?",
    # 中文
    "帮我订一张机票", "找一家酒店住一晚", "我想租一辆车", "买一张火车票", "帮我叫辆出租车", "附近有什么好玩的景点",
    "坐地铁怎么去", "明天天气怎么样", "周末会下雨吗", "附近有什么好吃的餐馆", "帮我订个位子", "红烧肉怎么做",
    "这个有多少卡路里", "点个外卖", "演唱会的票", "电影院在放什么电影", "放一首歌", "推荐一本书", "博物馆几点开门",
    "附近的牙医", "预约挂号看病", "找个理发店", "租一套房子", "找人修水管", "设一个早上七点的闹钟", "查一下银行卡余额",
    "给朋友转账", "交电费", "信用卡丢了", "申请贷款", "查快递", "退货", "换手机套餐", "网络连不上", "买车险",
    "请一天假", "什么时候发工资", "报名一门课程", "招聘信息", "东京现在几点", "把这句话翻译成英文", "讲个笑话",
    "澳大利亚的首都是哪里", "昨天的球赛谁赢了", "你是谁", "你叫什么名字", "你是机器人吗", "你能帮我做什么",
)
# fmt: on


_Key = tuple[int, float, tuple[tuple[str, tuple[str, ...]], ...]]
"""Encoder, cover threshold, the scenarios' texts."""


def _node_evidence(
    sims: np.ndarray, priors: np.ndarray, noise: float, owner: list[str]
) -> dict[str, np.ndarray]:
    """Per node, each row's mean evidence over the node's best `TOP_TEXTS` texts (as `Calibrator.measure`)."""
    ev = (sims - priors[None, :]) / noise
    out: dict[str, np.ndarray] = {}
    for key in dict.fromkeys(owner):
        cols = [j for j, o in enumerate(owner) if o == key]
        part = np.sort(ev[:, cols], axis=1)[:, ::-1][:, :TOP_TEXTS]
        out[key] = part.mean(axis=1)
    return out


class Scope:
    """Which background requests an assistant's scenarios leave uncovered (an LRU per set of scenario texts),
    and a message's evidence for them."""

    def __init__(self, probes: tuple[str, ...] = BACKGROUND, size: int = 256) -> None:
        self.probes = probes
        self._uncovered: OrderedDict[_Key, tuple[str, ...]] = OrderedDict()
        self._size = size
        self._lock = Lock()

    def uncovered(
        self,
        calibrator: Calibrator,
        encoder: Encoder,
        scenarios: Mapping[str, tuple[str, ...]],
        cover: float,
    ) -> tuple[str, ...]:
        """The background requests whose evidence stays below `cover` for every scenario."""
        key: _Key = (id(encoder), cover, tuple(sorted(scenarios.items())))
        with self._lock:
            if key in self._uncovered:
                self._uncovered.move_to_end(key)
                return self._uncovered[key]
        texts = [t for docs in scenarios.values() for t in docs]
        owner = [k for k, docs in scenarios.items() for _ in docs]
        if not texts:
            found = self.probes
        else:
            priors = calibrator.priors(encoder, texts)
            noise = calibrator.noise_of(priors)
            vectors = encoder.encode([*self.probes, *texts])
            sims = vectors[: len(self.probes)] @ vectors[len(self.probes) :].T
            per = _node_evidence(sims, np.array([p for p, _ in priors]), noise, owner)
            best = np.max(np.stack(list(per.values())), axis=0)
            found = tuple(p for p, b in zip(self.probes, best, strict=True) if b < cover)
        with self._lock:
            self._uncovered[key] = found
            while len(self._uncovered) > self._size:
                self._uncovered.popitem(last=False)
        return found

    def evidence(
        self, calibrator: Calibrator, encoder: Encoder, uncovered: tuple[str, ...], message: str, noise: float
    ) -> float:
        """The message's evidence for the uncovered requests, in the decision's noise unit (-inf: none)."""
        if not uncovered:
            return float("-inf")
        priors = calibrator.priors(encoder, uncovered)
        vectors = encoder.encode([message, *uncovered])
        sims = (vectors[1:] @ vectors[0])[None, :]
        per = _node_evidence(sims, np.array([p for p, _ in priors]), noise, ["_"] * len(uncovered))
        return float(per["_"][0])


SCOPE = Scope()
"""One per process, like the calibrator."""
