"""Generate the routing benchmark datasets from the hand-written material in routing_domains.py and
routing_domains_test.py.

    python bench/data/routing_generate.py      # writes routing_conversations.jsonl, routing_heldout.jsonl
                                               # and routing_test.jsonl

Deterministic (fixed seeds). The main and held-back files share no customer sentence: pools are split by
position. The test file (routing_test.jsonl) is built from its own material (three domains the other files do
not have, its own greetings, thanks, requests for a human and canned replies), uses its pools whole, has no game
plays and a different seed; it is meant for a final evaluation only, never for tuning.
Conversation shapes: a greeting or a direct request, follow-ups that stay on topic, topic switches (from one
specialist to another: out of scope for the specialist, so it hands back and triage routes on), general
questions for the triage assistant, "thanks" turns, requests that match a node that is not adjacent (in the
domains with extra scenario -> scenario edges and in the game flow), requests for a human at the end, and
long conversations of 20+ turns. Every turn carries a canned assistant reply, so no strategy's history depends
on generated text.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from routing_domains import DOMAINS_HELD, DOMAINS_MAIN, GAME, GREETINGS, HUMAN_REQUESTS, REPLIES, THANKS
from routing_domains_test import DOMAINS_TEST, GREETINGS_TEST, HUMAN_REQUESTS_TEST, REPLIES_TEST, THANKS_TEST

HERE = Path(__file__).resolve().parent

# Shared pools and canned replies: one set for the main and held-back files, another for the test file.
MATERIAL = {"human": HUMAN_REQUESTS, "thanks": THANKS, "greetings": GREETINGS, "replies": REPLIES}
MATERIAL_TEST = {
    "human": HUMAN_REQUESTS_TEST,
    "thanks": THANKS_TEST,
    "greetings": GREETINGS_TEST,
    "replies": REPLIES_TEST,
}


def split(pool: list[str], part: int | None) -> list[str]:
    """Half of a pool (even or odd positions); part None: the whole pool."""
    return list(pool) if part is None else pool[part::2]


class Pools:
    def __init__(
        self, domain: dict, lang: str, part: int | None, rng: random.Random, material: dict = MATERIAL
    ) -> None:
        self.rng = rng
        self.lang = lang
        self.requests = {s["key"]: split(s["requests"][lang], part) for s in domain["scenarios"]}
        self.followups = {s["key"]: split(s["followups"][lang], part) for s in domain["scenarios"]}
        self.general = split(domain["general"][lang], part)
        self.human = split(material["human"][lang], part)
        self.thanks = split(material["thanks"][lang], part)
        self.greetings = split(material["greetings"][lang], part)
        self.used: set[str] = set()

    def take(self, pool: list[str]) -> str:
        fresh = [p for p in pool if p not in self.used]
        choice = self.rng.choice(fresh or pool)
        self.used.add(choice)
        return choice


def reply(kind: str, lang: str, title: str = "", replies: dict = REPLIES) -> str:
    return replies[kind][lang].format(title=title)


def support_conversation(
    domain: dict,
    lang: str,
    part: int | None,
    rng: random.Random,
    index: int,
    long: bool,
    material: dict = MATERIAL,
) -> dict:
    pools = Pools(domain, lang, part, rng, material)
    replies = material["replies"]
    titles = {s["key"]: s["title"] for s in domain["scenarios"]}
    keys = list(titles)
    target_len = rng.randint(20, 24) if long else rng.randint(4, 8)
    turns: list[dict] = []
    current = "triage"

    def add(user: str, expect: str, kind: str) -> None:
        nonlocal current
        current = expect
        if kind == "triage":
            text = reply("triage", lang, replies=replies)
        elif kind == "request":
            text = reply("specialist", lang, titles[expect], replies)
        else:
            text = reply("followup", lang, replies=replies)
        turns.append({"user": user, "expect": expect, "assistant": text})

    if rng.random() < 0.5:
        add(pools.take(pools.greetings), "triage", "triage")
    while len(turns) < target_len:
        roll = rng.random()
        if current == "triage" or roll < 0.30:
            nxt = rng.choice([k for k in keys if k != current])
            add(pools.take(pools.requests[nxt]), nxt, "request")
            for _ in range(rng.randint(1, 3)):
                if len(turns) >= target_len:
                    break
                add(pools.take(pools.followups[nxt]), nxt, "followup")
        elif roll < 0.40:
            add(pools.take(pools.general), "triage", "triage")
        elif roll < 0.50:
            add(pools.take(pools.thanks), current, "followup")
        else:
            add(pools.take(pools.followups[current]), current, "followup")
    if rng.random() < 0.35:
        turns.append({"user": pools.take(pools.human), "expect": "human"})
    conv = {
        "id": f"{domain['id']}-{lang}-{index:02d}",
        "assistant": domain["assistant"],
        "scenarios": [
            {k: s[k] for k in ("key", "title", "description", "instruction", "examples")}
            for s in domain["scenarios"]
        ],
        "turns": turns,
    }
    return conv


def with_direct_edges(conv: dict, rng: random.Random) -> dict:
    """A variant graph: star plus one scenario -> scenario edge pair (so some requests have a direct way and
    others must go through triage)."""
    keys = [s["key"] for s in conv["scenarios"]]
    a, b = rng.sample(keys, 2)
    edges = [["triage", k] for k in keys] + [[k, "triage"] for k in keys] + [[a, b], [b, a]]
    conv["edges"] = edges
    return conv


GAME_SCRIPTS = [
    # (user, expect) with the seed's flow: rules for start/continue/done, AI speakers hand over after replying.
    [
        ("这个游戏怎么玩？", "triage"),
        ("我投2号", "triage"),
        ("开始游戏", "setup"),
        ("换一个词", "setup"),
        ("继续", "human_speaks"),
        ("是一种水果", "human_speaks"),
        ("我投3号", "human_speaks"),
        ("长在树上", "human_speaks"),
        ("完成", "human_votes"),
        ("我投2号", "human_votes"),
        ("完成", "result"),
        ("继续", "human_speaks"),
        ("颜色是红的", "human_speaks"),
        ("完成", "human_votes"),
        ("投1号", "human_votes"),
        ("完成", "result"),
        ("继续", "human_speaks"),
        ("很甜", "human_speaks"),
        ("完成", "human_votes"),
        ("3号", "human_votes"),
        ("完成", "result"),
        ("结束游戏", "triage"),
    ],
    [
        ("你好", "triage"),
        ("规则是什么？", "triage"),
        ("开始", "setup"),
        ("继续", "human_speaks"),
        ("是个动物", "human_speaks"),
        ("会游泳", "human_speaks"),
        ("完成", "human_votes"),
        ("我觉得1号是卧底", "human_votes"),
        ("完成", "result"),
        ("继续", "human_speaks"),
        ("生活在海里", "human_speaks"),
        ("完成", "human_votes"),
        ("投2号", "human_votes"),
        ("完成", "result"),
        ("继续", "human_speaks"),
        ("体型很大", "human_speaks"),
        ("完成", "human_votes"),
        ("1", "human_votes"),
        ("完成", "result"),
        ("结束", "triage"),
        ("再见", "triage"),
    ],
    [
        ("start game", "setup"),
        ("继续", "human_speaks"),
        ("是一本小说里的人物", "human_speaks"),
        ("完成", "human_votes"),
        ("我投3号", "human_votes"),
        ("完成", "result"),
        ("继续", "human_speaks"),
        ("男的", "human_speaks"),
        ("出身富贵", "human_speaks"),
        ("完成", "human_votes"),
        ("2号", "human_votes"),
        ("完成", "result"),
        ("继续", "human_speaks"),
        ("很多愁善感", "human_speaks"),
        ("完成", "human_votes"),
        ("投3号吧", "human_votes"),
        ("完成", "result"),
        ("继续", "human_speaks"),
        ("住在大观园", "human_speaks"),
        ("完成", "human_votes"),
        ("1号", "human_votes"),
        ("完成", "result"),
    ],
    [
        ("开始游戏", "setup"),
        ("换一个", "setup"),
        ("继续", "human_speaks"),
        ("是一种交通工具", "human_speaks"),
        ("完成", "human_votes"),
        ("投2号", "human_votes"),
        ("完成", "result"),
        ("继续", "human_speaks"),
        ("有轮子", "human_speaks"),
        ("完成", "human_votes"),
        ("1号", "human_votes"),
        ("完成", "result"),
        ("结束游戏", "triage"),
        ("下次再玩", "triage"),
    ],
]

GAME_REPLIES = {
    "triage": "《谁是卧底》：每位玩家拿到一个词，卧底的词不同。输入“开始游戏”开始。",
    "setup": "你被分配到的词语是：【苹果】。输入“换一个”重新生成词语；输入“继续”进入下一个环节。",
    "human_speaks": "已经保存你的发言。请继续描述，或者说“完成”结束发言。",
    "human_votes": "1号AI玩家说：它很常见。2号AI玩家说：它可以吃。3号AI玩家说：它是圆的。现在请投票，回复1、2或3。",
    "result": "AI玩家投票完毕。本轮结果：2号AI玩家出局。输入“继续”进入下一轮，或“结束游戏”。",
}


def game_conversation(script: list[tuple[str, str]], index: int) -> dict:
    turns = []
    for user, expect in script:
        turns.append({"user": user, "expect": expect, "assistant": GAME_REPLIES.get(expect, "好的。")})
    return {
        "id": f"undercover-zh-{index:02d}",
        "assistant": GAME["assistant"],
        "scenarios": GAME["scenarios"],
        "edges": GAME["edges"],
        "global": GAME["global"],
        "nodes": GAME["nodes"],
        "turns": turns,
    }


def build(
    domains: list[dict],
    part: int | None,
    seed: int,
    per_domain_lang: int,
    long_every: int,
    games: list[int],
    material: dict = MATERIAL,
) -> list[dict]:
    rng = random.Random(seed)
    out: list[dict] = []
    index = 0
    for domain in domains:
        for lang in ("en", "zh"):
            for j in range(per_domain_lang):
                index += 1
                conv = support_conversation(
                    domain, lang, part, rng, index, long=(index % long_every == 0), material=material
                )
                if j % 3 == 2:
                    conv = with_direct_edges(conv, rng)
                out.append(conv)
    for i in games:
        out.append(game_conversation(GAME_SCRIPTS[i], i + 1))
    return out


def write(path: Path, conversations: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for conv in conversations:
            fh.write(json.dumps(conv, ensure_ascii=False) + "\n")
    turns = sum(len(c["turns"]) for c in conversations)
    print(f"{path.name}: {len(conversations)} conversations, {turns} turns")


if __name__ == "__main__":
    main = build(DOMAINS_MAIN, part=0, seed=20240717, per_domain_lang=5, long_every=6, games=[0, 1, 2])
    held = build(DOMAINS_HELD, part=1, seed=7170424, per_domain_lang=1, long_every=4, games=[3])
    test = build(
        DOMAINS_TEST,
        part=None,
        seed=31052025,
        per_domain_lang=4,
        long_every=3,
        games=[],
        material=MATERIAL_TEST,
    )
    write(HERE / "routing_conversations.jsonl", main)
    write(HERE / "routing_heldout.jsonl", held)
    write(HERE / "routing_test.jsonl", test)
