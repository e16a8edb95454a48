"""Does the customer ask for a person? People are the costly destination: control never comes back from them,
so a wrong jump ends the AI's part of the conversation. Every mode asks this one question before handing a
message to people (semantic, router and custom alike), and nothing else sends a message there except the
builder's rules and an agent's own escalation tool.

The answer compares the message with two fixed sets of messages, EN and ZH: requests for a person, and ordinary
requests and near misses that mention staff, people or service without asking for one. The sets belong to the
product, not to any assistant's configuration, so the two thresholds hold for every configuration; they were set
on the development files of the routing benchmark (docs/routing.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .scoring import Encoder

# fmt: off
ASKS_FOR_PEOPLE: tuple[str, ...] = (
    "I want to talk to a real person", "let me speak to a human agent please",
    "can I talk to someone from your staff?", "connect me to a human", "transfer me to an agent",
    "I don't want to talk to a bot", "get me a real person", "is there a human I can talk to?",
    "put me through to customer service staff", "I'd like to speak with a representative", "human please",
    "agent please", "operator", "stop the bot, get me a human", "put me through to a real agent",
    "let me talk to a supervisor", "I'd rather talk to an actual employee", "I want to speak to a manager",
    "转人工", "我要找人工客服", "人工服务", "请帮我转接真人", "我不想跟机器人说话", "能让工作人员跟我说吗", "叫个真人来",
    "我要和客服人员通话", "有没有人工", "找个活人", "转接人工客服", "不要机器人，我要人工", "我要跟真人说", "帮我转给你们的同事",
)
DOES_NOT: tuple[str, ...] = (
    "I want to change my plan", "I need help with my order", "I want to cancel", "I'd like a refund",
    "my customer number is 12345", "please send it to my email", "I need a receipt", "can you check my account?",
    "do your staff speak Spanish?", "I need a letter for human resources", "who are you?", "are you a bot?",
    "this is frustrating, my payment failed again", "how do I reach you by phone?",
    "what are your opening hours?", "I want to book an appointment", "thanks, that helps",
    "no, that's not what I meant", "can you ask the delivery driver?", "I spoke to your colleague yesterday",
    "I booked it through a travel agency", "my agent told me it was covered",
    "我想改一下套餐", "我要取消", "我想借钱", "我的客户号是12345", "请发到我的邮箱", "我需要收据", "帮我查一下账户",
    "你们的员工会说英语吗", "你是谁", "你是机器人吗", "太慢了，付款又失败了", "客服电话是多少", "营业时间是什么时候",
    "我想预约", "换一个", "好的谢谢", "不是这个意思", "能帮我问一下司机吗", "我昨天跟你们同事说过了",
    "我是通过中介订的", "男的", "女的",
)
# fmt: on


@dataclass(frozen=True)
class PeopleCheck:
    asks: bool
    closest: float
    """Similarity with the closest request for a person."""
    gap: float
    """`closest` minus the similarity with the closest message that does not ask for one."""

    @property
    def reason(self) -> str:
        verb = "asks" if self.asks else "does not ask"
        return f"{verb} for a person ({self.closest:.2f}, {self.gap:+.2f} over other requests)"


def asks_for_people(encoder: Encoder, message: str, *, floor: float, gap: float) -> PeopleCheck:
    """`floor`: the closest request for a person must be at least this similar; `gap`: and more similar than
    any ordinary request by this much."""
    # A request for a person often comes with other words ("the fee is outrageous, I want a complaint, 转人工"):
    # the whole message is diluted, so each of its clauses is checked too, and the clearest one counts.
    parts = [message, *(c for c in clauses(message) if c != message.strip())]
    vectors = encoder.encode([*parts, *ASKS_FOR_PEOPLE, *DOES_NOT])
    texts, requests, others = (
        vectors[: len(parts)],
        vectors[len(parts) : len(parts) + len(ASKS_FOR_PEOPLE)],
        vectors[len(parts) + len(ASKS_FOR_PEOPLE) :],
    )
    closest = (texts @ requests.T).max(axis=1)
    margins = closest - (texts @ others.T).max(axis=1)
    asks = (closest >= floor) & (margins >= gap)
    i = int(np.argmax(asks)) if asks.any() else int(np.argmax(margins))
    return PeopleCheck(bool(asks[i]), round(float(closest[i]), 4), round(float(margins[i]), 4))


_CLAUSE_END = re.compile(r"[.!?;,。！？；，]+")


def clauses(message: str) -> list[str]:
    """The message cut at sentence and clause punctuation (EN and ZH), blanks and empty pieces dropped."""
    return [c.strip() for c in _CLAUSE_END.split(message) if len(c.strip()) >= 2]
