"""Seed a demo account: an API inbox (with members, business hours and an SLA policy), a website widget inbox, an e-mail
inbox, an assistant with three scenarios, FAQ entries, two users, a macro and an automation rule.

Idempotent: running it again updates the demo objects instead of duplicating them.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from rest_framework.authtoken.models import Token

from captain.answering.models import CreditBalance
from captain.assistants.services.assistants import assistant_inbox_take_over
from captain.knowledge.selectors import faq_entry_list
from captain.knowledge.services.faq import faq_entry_create, faq_entry_update
from captain.management.demo_objects import demo_assistant, demo_scenarios
from captain.management.demo_team import demo_team_setup
from captain.routing.models import RoutingMode
from captain.routing.services.routing import routing_config_update, routing_node_examples_set
from helpdesk.models import Account, Inbox, InboxMember, Membership

DEMO_ACCOUNT = "Acme Demo"
DEMO_SECRET = "demo-inbox-secret"
DEMO_WEBHOOK_TOKEN = "demo-api-inbox"
DEMO_WIDGET_TOKEN = "demo-website-widget"
DEMO_EMAIL_TOKEN = "demo-support-email"
DEMO_EMAIL_SIGNING_KEY = "demo-mailgun-signing-key"
DEMO_SMTP_PORT = "8025"
"""scripts/supervisor.py's DEMO_SMTP_PORT: where `manage.py helpdesk_email_demo` runs its SMTP sink."""

SCENARIOS = [
    {
        "key": "refunds",
        "title": "Refunds",
        "description": "The customer wants a refund, to return an item, or asks about money back.",
        "instruction": "Ask for the order number if it is missing, explain the 30-day refund policy using "
        "faq_lookup, and confirm the next step. Hand over to a human for refunds above 500 EUR.",
        "tools": ["faq_lookup", "add_label", "add_private_note"],
    },
    {
        "key": "shipping",
        "title": "Shipping",
        "description": "Questions about delivery times, shipping costs, tracking an order or a late parcel.",
        "instruction": "Use faq_lookup for delivery times and costs. For a late parcel, ask for the order number.",
        "tools": ["faq_lookup", "add_label"],
    },
    {
        "key": "tech_support",
        "title": "Technical support",
        "description": "The product does not work, an error message, login or app problems.",
        "instruction": "Ask what the customer sees and on which device, then suggest the documented fix from "
        "faq_lookup. If nothing helps, hand over to a human with a summary.",
        "tools": ["faq_lookup", "set_priority", "add_private_note"],
    },
    {
        # No example phrases on purpose: routed on its title and description (and, once the worker has drafted
        # them, on the drafted examples shown in the admin), as most builders configure scenarios.
        "key": "invoices",
        "title": "Invoices and business orders",
        "description": "The customer needs an invoice or a VAT receipt, wants to change the billing details, or "
        "buys for a company.",
        "instruction": "Ask for the order number and, for a company, its name and VAT number. Invoices are sent by "
        "e-mail within one working day.",
        "tools": ["faq_lookup", "add_label"],
    },
]

# Phrases customers use, for the semantic router (docs/routing.md); English and Chinese.
EXAMPLES = {
    "refunds": [
        "I want my money back",
        "Can I return this item?",
        "refund for order 42",
        "我要退款",
        "怎么退货",
    ],
    "shipping": [
        "Where is my parcel?",
        "How long does delivery take?",
        "my order has not arrived",
        "快递到哪了",
    ],
    "tech_support": ["The app crashes", "I can't log in", "I get an error message", "应用打不开", "登录不了"],
}

FAQ = [
    ("How long does a refund take?", "Refunds reach your original payment method within 5 business days."),
    ("What is the refund policy?", "You can return any item within 30 days of delivery for a full refund."),
    ("How long does shipping take?", "Standard shipping takes 2-4 business days in the EU, express 1 day."),
    ("How much does shipping cost?", "Shipping is free above 50 EUR, otherwise 4.90 EUR."),
    ("How do I track my order?", "Use the tracking link in your shipping confirmation e-mail."),
    ("I forgot my password", "Use 'Forgot password' on the login page; the reset link is valid for 1 hour."),
    ("The app crashes on start", "Update the app to the latest version, then restart your phone."),
    ("退款需要多长时间？", "退款会在 5 个工作日内退回到您的原支付方式。"),
]


class Command(BaseCommand):
    help = "Seed the demo account (inbox, assistant, scenarios, FAQ, users). Safe to run repeatedly."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--callback-url", default="", help="Where the API inbox POSTs replies.")
        parser.add_argument("--password", default="demo-password", help="Password of the demo users.")
        parser.add_argument(
            "--force",
            action="store_true",
            help="Seed even with DEBUG off (the demo's credentials are public).",
        )

    @transaction.atomic
    def handle(
        self, *args: Any, callback_url: str, password: str, force: bool = False, **options: Any
    ) -> None:
        if not settings.DEBUG and not force:
            raise CommandError(
                "The demo account comes with published credentials (its inbox secret and user passwords are in "
                "the README), so it is seeded only with DEBUG on (scripts/run's embedded demo) or with --force."
            )
        account, _ = Account.objects.get_or_create(name=DEMO_ACCOUNT)
        CreditBalance.objects.get_or_create(account=account, defaults={"limit": 1000})
        # The secret only on creation: a secret someone changed since is never reset by a restart.
        inbox, _ = Inbox.objects.update_or_create(
            webhook_token=DEMO_WEBHOOK_TOKEN,
            defaults={
                "account": account,
                "name": "Website API",
                "channel_type": Inbox.ChannelType.API,
                # Handoffs to no team go round-robin to the inbox's members (the demo agent, when online).
                "auto_assign": True,
                **({"callback_url": callback_url} if callback_url else {}),
            },
            create_defaults={
                "account": account,
                "name": "Website API",
                "channel_type": Inbox.ChannelType.API,
                "secret": DEMO_SECRET,
                "callback_url": callback_url,
                "auto_assign": True,
            },
        )
        # Assistants, scenarios, FAQ and routing go through the same services as the admin and the API.
        assistant = demo_assistant(
            account,
            name="Captain",
            product_name="Acme Shop",
            description="Acme Shop sells home electronics online in the EU.",
            response_guidelines=["Keep answers under three sentences.", "Use the customer's language."],
            guardrails=["Never promise a refund amount or a delivery date that the FAQ does not state."],
        )
        assistant_inbox_take_over(assistant=assistant, inbox=inbox)
        # The website widget, for the shop page `manage.py helpdesk_widget_page` serves on 127.0.0.1:8090.
        widget, _ = Inbox.objects.get_or_create(
            webhook_token=DEMO_WIDGET_TOKEN,
            defaults={
                "account": account,
                "name": "Website chat",
                "channel_type": "widget",  # data: the channel's value, as an admin would pick it
                "provider_config": {"allowed_origins": "http://127.0.0.1:8090 http://localhost:8090"},
            },
        )
        assistant_inbox_take_over(assistant=assistant, inbox=widget)
        assistant_inbox_take_over(assistant=assistant, inbox=demo_mailbox(account))
        demo_scenarios(assistant, SCENARIOS)
        # Graph routing with the product's default mode: rules, then embeddings, the model only as tie-breaker.
        routing_config_update(assistant=assistant, default_mode=RoutingMode.SEMANTIC)
        for key, examples in EXAMPLES.items():
            routing_node_examples_set(assistant=assistant, key=key, examples=examples)
        entries = {entry.question: entry for entry in faq_entry_list(assistant=assistant)}
        for question, answer in FAQ:
            if question in entries:
                faq_entry_update(entry=entries[question], answer=answer)
            else:
                faq_entry_create(assistant=assistant, question=question, answer=answer)
        users = {}
        for username, role, staff in (
            ("admin", Membership.Role.ADMIN, True),
            ("agent", Membership.Role.AGENT, False),
        ):
            user, created = get_user_model().objects.get_or_create(
                username=username, defaults={"is_staff": staff}
            )
            if created:
                user.set_password(password)
                user.save()
            Membership.objects.update_or_create(account=account, user=user, defaults={"role": role})
            if (
                role == Membership.Role.AGENT
            ):  # escalations without a team reach the agent, not only the admin
                InboxMember.objects.get_or_create(inbox=inbox, user=user)
            users[username] = Token.objects.get_or_create(user=user)[0].key
        demo_team_setup(account, inbox)
        self.stdout.write(
            f"Demo account #{account.id} '{account.name}': inbox webhook /webhooks/api/{inbox.webhook_token}/ "
            f"(secret {DEMO_SECRET}), assistant '{assistant.name}' with {len(SCENARIOS)} scenarios, "
            f"{len(FAQ)} FAQ entries; business hours, the SLA policy 'Standard', the macro 'Refund sent' and the "
            f"rule 'Urgent words' on the inbox.\nUsers: admin / agent (password '{password}' on first creation); "
            f"API tokens: admin={users['admin']} agent={users['agent']}"
        )


def demo_mailbox(account: Account) -> Inbox:
    """The support address, for `manage.py helpdesk_email_demo`: mail in through the signed Mailgun route,
    answers out through the command's SMTP sink on this machine. The signing key only on creation, like the API
    inbox's secret."""
    config = {
        "smtp_host": "127.0.0.1",
        "smtp_port": os.environ.get("DEMO_SMTP_PORT") or DEMO_SMTP_PORT,
        "smtp_security": "none",
        "from_address": "support@acme-shop.example",
        "from_name": "Acme Shop support",
        "greeting": "Hello {name},",
        "sign_off": "Best regards,\nAcme Shop support",
    }
    # channel_type is data: the channel's value, as an admin would pick it.
    fields = {
        "account": account,
        "name": "Support e-mail",
        "channel_type": "email",
        "provider_config": config,
    }
    mailbox, _ = Inbox.objects.update_or_create(
        webhook_token=DEMO_EMAIL_TOKEN,
        create_defaults={**fields, "secret": DEMO_EMAIL_SIGNING_KEY},
        defaults=fields,
    )
    return mailbox
