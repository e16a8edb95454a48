"""Seed the "Who is the Undercover" (谁是卧底) game of seed 000 as an assistant whose scenarios are the game
stages, wired with the jump modes and timings the seed describes:

    guide (triage) --"开始游戏" rule / router model, after input--> game setup
    game setup --"继续" rule, custom router with the seed's prompt--> human speaks
    human speaks --own model calls the handoff tool on "完成"--> AI players speak
    AI players speak --custom router "select human votes unconditionally", AFTER REPLY--> human votes
    human votes --own model on "完成"--> AI players vote
    AI players vote --unconditional rule, AFTER REPLY--> round result
    round result --"继续" rule--> human speaks ; --"结束" rule--> guide
    game setup is global (restart: "重新开始" from any stage)

Playable through the API channel: POST customer messages to the printed webhook; replies go to the inbox's
callback URL, and `GET .../conversations/<id>/routing-decisions/` shows every jump decision.
Idempotent: running it again updates the objects.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from rest_framework.authtoken.models import Token

from captain.answering.models import CreditBalance
from captain.assistants.services.assistants import assistant_inbox_take_over
from captain.management.demo_objects import demo_assistant, demo_scenarios
from captain.routing.services.routing import GraphSpec, routing_replace
from helpdesk.models import Account, Inbox, Membership

ACCOUNT = "Undercover Demo"
WEBHOOK_TOKEN = "undercover-api-inbox"
SECRET = "undercover-inbox-secret"

HOST = (
    "你叫“疾风”，是《谁是卧底》游戏的主持人。游戏有一位人类玩家和三位AI玩家（1号、2号、3号）。"
    "谨记：在游戏结束之前，每个玩家只能知道自己的词语。*绝对不能*向任何玩家泄漏任何人的身份或其他玩家的词语。"
)

STAGES = [
    {
        "key": "game_setup",
        "title": "游戏准备",
        "description": "进行游戏准备：分配身份和词语。用户说“开始游戏”或“重新开始”时进入。",
        "instruction": HOST
        + "\n\n当前是游戏准备环节。想好一对相近的词语（平民词和卧底词），随机决定谁是卧底，"
        "只告诉人类玩家他/她自己的词语，格式：你被分配到的词语是：【词语】。然后提示：输入“换一个”重新生成词语；输入“继续”进入下一个环节。",
    },
    {
        "key": "human_speaks",
        "title": "人类玩家发言",
        "description": "人类玩家进行发言。",
        "instruction": HOST
        + "\n\n当前是人类玩家发言的环节。引导用户描述自己的词语，可以多次发言，直到用户说“完成”为止。"
        "每次确认已记录发言，并提醒用户输入“完成”结束发言。如果用户说“完成”，调用 handoff_to_ai_speaks 跳转到AI玩家发言环节。",
    },
    {
        "key": "ai_speaks",
        "title": "AI玩家发言",
        "description": "AI玩家进行发言。",
        "instruction": HOST
        + "\n\n当前是AI玩家发言环节。依次写出1号、2号、3号AI玩家各一句对自己词语的描述（不能直接说出词语），"
        "格式“1号AI玩家说：……”，最后说“AI玩家发言完毕。”",
    },
    {
        "key": "human_votes",
        "title": "人类玩家投票",
        "description": "人类玩家进行投票。",
        "instruction": HOST
        + "\n\n当前是人类玩家投票环节。请用户回复1、2或3投票给他/她认为是卧底的AI玩家，可以修改，"
        "直到用户说“完成”为止。如果用户说“完成”，调用 handoff_to_ai_votes 跳转到AI玩家投票环节。",
    },
    {
        "key": "ai_votes",
        "title": "AI玩家投票",
        "description": "AI玩家进行投票。",
        "instruction": HOST
        + "\n\n当前是AI玩家投票环节。写出三位AI玩家各自投给了谁（格式“1号AI玩家投给了2号”），然后说“投票完毕”。",
    },
    {
        "key": "round_result",
        "title": "报告本轮游戏结果",
        "description": "报告本轮游戏结果。",
        "instruction": HOST
        + "\n\n当前是报告本轮结果的环节。统计人类玩家和AI玩家的投票，宣布得票最多的玩家出局以及他是不是卧底。"
        "如果游戏结束，公布所有人的词语。最后提示：输入“继续”进入下一轮发言，或输入“结束游戏”。",
    },
]

RESTART = {"node": "", "match": "contains", "value": "重新开始", "target": "game_setup"}

GRAPH = GraphSpec(
    config={"default_mode": "semantic", "history_rounds": 2, "max_hops": 3, "star": False},
    nodes=[
        # 1. guide -> setup: a dedicated router model, after input (and a zero-cost rule for the exact words).
        {"key": "assistant", "mode": "router", "timing": "after_input"},
        # Seed: a custom router whose prompt asks for *exactly* 继续; the rule catches it without a model call.
        {
            "key": "game_setup",
            "mode": "custom",
            "timing": "after_input",
            "is_global": True,
            "rule_prompt": 'If the last input from the user is exactly "继续", select human_speaks. Otherwise stay.',
        },
        # 2. human speaks -> AI speaks: the node's own model calls the handoff tool when the user says 完成.
        {"key": "human_speaks", "mode": "tool", "timing": "after_input"},
        # 3. AI speaks -> human votes: a custom router AFTER THE REPLY, unconditionally.
        {
            "key": "ai_speaks",
            "mode": "custom",
            "timing": "after_reply",
            "rule_prompt": "You MUST select human_votes unconditionally.",
        },
        {"key": "human_votes", "mode": "tool", "timing": "after_input"},
        {"key": "ai_votes", "mode": "router", "timing": "after_reply"},
        {"key": "round_result", "mode": "semantic", "timing": "after_input"},
    ],
    edges=[
        ("assistant", "game_setup"),
        ("game_setup", "human_speaks"),
        ("human_speaks", "ai_speaks"),
        ("ai_speaks", "human_votes"),
        ("human_votes", "ai_votes"),
        ("ai_votes", "round_result"),
        ("round_result", "human_speaks"),
        ("round_result", "assistant"),
    ],
    rules=[
        {
            "node": "assistant",
            "match": "regex",
            "value": r"^\s*(开始|开始游戏|start|start game)\s*[!！。.]?\s*$",
            "target": "game_setup",
        },
        {"node": "game_setup", "match": "exact", "value": "继续", "target": "human_speaks"},
        {**RESTART, "node": "human_speaks"},
        {**RESTART, "node": "human_votes"},
        {**RESTART, "node": "round_result"},
        {"node": "ai_votes", "match": "regex", "value": ".*", "target": "round_result"},
        {"node": "round_result", "match": "exact", "value": "继续", "target": "human_speaks"},
        {"node": "round_result", "match": "contains", "value": "结束", "target": "assistant"},
    ],
)


class Command(BaseCommand):
    help = "Seed the 谁是卧底 (Who is the Undercover) game assistant with its routing graph. Safe to rerun."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--callback-url", default="", help="Where the API inbox POSTs replies.")
        parser.add_argument(
            "--password", default="demo-password", help="Password of the admin user if created."
        )

    @transaction.atomic
    def handle(self, *args: Any, callback_url: str, password: str, **options: Any) -> None:
        account, _ = Account.objects.get_or_create(name=ACCOUNT)
        CreditBalance.objects.get_or_create(account=account, defaults={"limit": 1000})
        inbox, _ = Inbox.objects.update_or_create(
            webhook_token=WEBHOOK_TOKEN,
            defaults={
                "account": account,
                "name": "Undercover API",
                "channel_type": Inbox.ChannelType.API,
                "secret": SECRET,
                **({"callback_url": callback_url} if callback_url else {}),
            },
        )
        # Assistant and scenarios through the write services (the template check included).
        assistant = demo_assistant(
            account,
            name="谁是卧底主持人",
            description="《谁是卧底》游戏的引导：介绍游戏规则，用户说“开始游戏”后进入游戏准备。",
            instructions=HOST + "\n\n当前是引导环节。简要介绍游戏规则，然后请用户输入“开始游戏”。",
            temperature=0.7,
            max_turns=4,
        )
        assistant_inbox_take_over(assistant=assistant, inbox=inbox)
        demo_scenarios(assistant, [{**stage, "tools": []} for stage in STAGES])
        routing_replace(assistant=assistant, spec=GRAPH)
        user, created = get_user_model().objects.get_or_create(username="admin", defaults={"is_staff": True})
        if created:
            user.set_password(password)
            user.save()
        Membership.objects.update_or_create(
            account=account, user=user, defaults={"role": Membership.Role.ADMIN}
        )
        token = Token.objects.get_or_create(user=user)[0].key
        self.stdout.write(
            f"Undercover account #{account.id}: webhook /webhooks/api/{inbox.webhook_token}/ (secret {SECRET}), "
            f"assistant #{assistant.id} '{assistant.name}' with {len(STAGES)} stages.\n"
            f"Routing graph: GET /api/v1/captain/accounts/{account.id}/assistants/{assistant.id}/routing/ ; "
            f"decisions: /api/v1/captain/accounts/{account.id}/conversations/<id>/routing-decisions/ "
            f"(admin token {token})"
        )
