"""Dashboard server render time on a large account: 10,000 conversations and 100,000 messages.

    python -m bench.dashboard_render [--conversations 10000] [--messages 100000] [--repeat 30] [--json PATH]

Seeds a throwaway SQLite database (a temporary file, migrated from scratch, written with `bulk_create`), signs
a user in, and requests each dashboard page through Django's test client `--repeat` times after one warm-up.
Reported per page: p50 and p95 of the server time (request in, full HTML out: URL routing, middleware, session,
queries, template rendering; no network, no browser) and the number of SQL queries. Goal: p95 < 100 ms.

The data is shaped like a busy account: a fifth of the conversations handled by the AI, a third waiting for
people (half of them assigned), the rest resolved; ten messages per conversation on average with one thread of
2,000 messages; five inboxes, eight labels, three agents.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _store_messages(message_model: Any, delivery_model: Any, batch: list[Any]) -> int:
    """Insert the messages, and a `sent` outbox row for each public outgoing one (the dashboard shows it)."""
    stored = message_model.objects.bulk_create(batch)
    delivery_model.objects.bulk_create(
        [
            delivery_model(message_id=m.pk, status="sent", created_at=m.created_at)
            for m in stored
            if m.message_type == "outgoing" and not m.private
        ]
    )
    return len(stored)


def setup_django(db_path: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{db_path}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DJANGO_DEBUG"] = "0"  # no query log kept in memory, as in production
    # Production settings with a bench-only key and plain HTTP, as the test suite runs (no redirect to https).
    import tests.support.test_environment  # noqa: F401  (sets os.environ defaults on import)

    os.environ["CAPTAIN_STORE_SPANS"] = "0"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def seed(n_conversations: int, n_messages: int) -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from helpdesk.models import (
        Account,
        Contact,
        ContactInbox,
        Conversation,
        Delivery,
        Inbox,
        Label,
        Membership,
        Message,
    )

    rng = random.Random(7)
    now = timezone.now()
    account = Account.objects.create(name="Busy account")
    other = Account.objects.create(name="Another tenant")
    users = [
        get_user_model().objects.create_user(username=f"agent{i}", password="bench-pass-123")
        for i in range(3)
    ]
    for i, user in enumerate(users):
        Membership.objects.create(account=account, user=user, role="admin" if i == 0 else "agent")
    inboxes = [Inbox.objects.create(account=account, name=f"Inbox {i}") for i in range(5)]
    Inbox.objects.create(account=other, name="Other inbox")
    labels = [Label.objects.create(account=account, name=f"label-{i}") for i in range(8)]

    contacts = Contact.objects.bulk_create(
        [
            Contact(account=account, name=f"Customer {i}", email=f"c{i}@example.com")
            for i in range(n_conversations)
        ],
        batch_size=2000,
    )
    contact_inboxes = ContactInbox.objects.bulk_create(
        [ContactInbox(contact=c, inbox=inboxes[i % 5], source_id=f"src-{i}") for i, c in enumerate(contacts)],
        batch_size=2000,
    )
    statuses = ["pending"] * 20 + ["open"] * 31 + ["snoozed"] * 2 + ["resolved"] * 47
    conversations = []
    for ci in contact_inboxes:
        status = rng.choice(statuses)
        age = dt_minutes(rng.randint(1, 60 * 24 * 30))
        conversations.append(
            Conversation(
                account=account,
                inbox_id=ci.inbox_id,
                contact_id=ci.contact_id,
                contact_inbox=ci,
                status=status,
                priority=rng.choice(["none", "none", "low", "medium", "high", "urgent"]),
                assignee=rng.choice(users) if status != "pending" and rng.random() < 0.5 else None,
                waiting_since=now - age if status == "open" else None,
                escalation_reason="The customer asked for a person." if status == "open" else "",
                last_activity_at=now - age,
            )
        )
    conversations = Conversation.objects.bulk_create(conversations, batch_size=2000)
    # The reports' facts: created_at is set on insert (auto_now_add), so it is back-dated here with the rest.
    for c in conversations:
        c.created_at = c.last_activity_at
        if c.status != "pending" or rng.random() < 0.5:
            c.first_reply_at = c.created_at + dt_minutes(rng.randint(0, 120))
        if c.status in ("open", "snoozed") or (c.status == "resolved" and rng.random() < 0.4):
            c.escalated_at = c.created_at + dt_minutes(rng.randint(0, 30))
        if c.status == "resolved":
            c.resolved_at = min(now, c.created_at + dt_minutes(rng.randint(5, 60 * 24 * 3)))
            c.resolved_by = "agent" if c.escalated_at else rng.choice(["ai", "ai", "inactivity"])
        if c.status == "snoozed":
            c.snoozed_until = now + dt_minutes(rng.randint(60, 60 * 24 * 3))
    Conversation.objects.bulk_update(
        conversations,
        ["created_at", "first_reply_at", "escalated_at", "resolved_at", "resolved_by", "snoozed_until"],
        batch_size=2000,
    )
    Through = Conversation.labels.through
    Through.objects.bulk_create(
        [
            Through(conversation_id=c.pk, label_id=labels[rng.randrange(8)].pk)
            for c in conversations
            if rng.random() < 0.4
        ],
        batch_size=5000,
    )

    # One long thread, the rest spread evenly.
    long_thread = conversations[0]
    long_count = min(2000, n_messages // 10)
    per_conversation = [0] * len(conversations)
    per_conversation[0] = long_count
    for i in range(n_messages - long_count):
        per_conversation[1 + i % (len(conversations) - 1)] += 1
    kinds = [
        ("incoming", "contact", False),
        ("outgoing", "assistant", False),
        ("incoming", "contact", False),
        ("outgoing", "user", False),
        ("outgoing", "user", True),
        ("activity", "system", False),
    ]
    batch: list[Message] = []
    total = 0
    for conversation, count in zip(conversations, per_conversation, strict=True):
        for j in range(count):
            message_type, sender_type, private = kinds[j % len(kinds)]
            batch.append(
                Message(
                    account_id=account.pk,
                    inbox_id=conversation.inbox_id,
                    conversation_id=conversation.pk,
                    message_type=message_type,
                    sender_type=sender_type,
                    private=private,
                    sender_user=users[1] if sender_type == "user" else None,
                    ai_agent_key="refunds" if sender_type == "assistant" else "",
                    ai_agent_name="Refunds" if sender_type == "assistant" else "",
                    content=(
                        f"订单 {rng.randint(1000, 99999)} 的包裹还没有到，我想申请退款。"
                        if j % 7 == 3  # some customers write in Chinese (the search's substring path)
                        else f"Message {j} about order {rng.randint(1000, 99999)}: the parcel has not arrived yet."
                    ),
                )
            )
            if len(batch) >= 5000:
                total += _store_messages(Message, Delivery, batch)
                batch = []
    if batch:
        total += _store_messages(Message, Delivery, batch)
    typical = next(c for c in conversations[1:] if c.status == "open")
    return {
        "account": account,
        "user": users[1],
        "admin": users[0],
        "long_thread": long_thread,
        "typical": typical,
        "label": labels[0],
        "inbox": inboxes[0],
        "messages": total,
        "conversations": len(conversations),
    }


def dt_minutes(minutes: int):
    import datetime as dt

    return dt.timedelta(minutes=minutes)


def measure(client, url: str, repeat: int) -> dict[str, Any]:
    from django.db import connection

    response = client.get(url)  # warm-up (and the session write of the first visit)
    if response.status_code != 200:
        raise SystemExit(f"{url} answered {response.status_code}")
    executed: list[str] = []

    def count(execute, sql, params, many, context):
        executed.append(sql)
        return execute(sql, params, many, context)

    # An execute wrapper, not CaptureQueriesContext: Django clears its query log at each request start.
    with connection.execute_wrapper(count):
        client.get(url)
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        client.get(url)
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    return {
        "url": url,
        "queries": len(executed),
        "p50_ms": round(statistics.median(timings), 1),
        "p95_ms": round(timings[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))], 1),
        "bytes": len(response.content),
    }


def search_pages(agent: Any, base: str, data: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """The search page (helpdesk.selectors.search) on the shapes agents type: a word every message holds (the
    index gives the newest 500, the filters run on those), an order number, Chinese words (three characters
    go through the trigram index, two through the scan), an e-mail, a #number, filters, operators and a
    10,000-character paste."""
    from urllib.parse import urlencode

    search = f"{base}/search/?"
    return [
        ("search: word in every message", agent, search + urlencode({"q": "parcel"})),
        ("search: order number", agent, search + urlencode({"q": "4242"})),
        ("search: two words, one rare", agent, search + urlencode({"q": "parcel 4242"})),
        ("search: Chinese, 3+ characters", agent, search + urlencode({"q": "申请退款"})),
        ("search: Chinese, 2 characters", agent, search + urlencode({"q": "退款"})),
        ("search: contact e-mail", agent, search + urlencode({"q": "c4242@example.com"})),
        ("search: #conversation", agent, search + urlencode({"q": f"#{data['typical'].pk}"})),
        (
            "search: word + status, inbox, label",
            agent,
            search
            + urlencode(
                {"q": "parcel", "status": "open", "inbox": data["inbox"].pk, "label": data["label"].pk}
            ),
        ),
        ("search: operators", agent, search + urlencode({"q": '"parcel* NEAR(order -4242) AND'})),
        ("search: 10,000 characters", agent, search + urlencode({"q": "parcel " * 1430})),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    workdir = Path(tempfile.mkdtemp(prefix="dashboard-bench-"))
    db_path = workdir / "bench.sqlite3"
    try:
        setup_django(db_path)
        started = time.perf_counter()
        data = seed(args.conversations, args.messages)
        seeded_s = time.perf_counter() - started

        from django.test import Client

        agent, admin = Client(), Client()
        agent.force_login(data["user"])
        admin.force_login(data["admin"])
        a = data["account"].pk
        base = f"/app/accounts/{a}"
        from django.utils import timezone

        today = timezone.localdate()
        year_ago = today - dt_minutes(365 * 24 * 60)
        pages = [
            ("list: needs people", agent, f"{base}/lists/needs-people/"),
            ("list: AI handling", agent, f"{base}/lists/ai/"),
            ("list: mine", agent, f"{base}/lists/mine/"),
            ("list: unassigned", agent, f"{base}/lists/unassigned/"),
            ("list: resolved", agent, f"{base}/lists/resolved/"),
            ("list: resolved, page 40", agent, f"{base}/lists/resolved/?page=40"),
            (
                "list: needs people, inbox+label+priority",
                agent,
                f"{base}/lists/needs-people/?inbox={data['inbox'].pk}&label={data['label'].pk}&priority=high",
            ),
            ("list: needs people, text search", agent, f"{base}/lists/needs-people/?q=parcel+4242"),
            ("list: all", agent, f"{base}/lists/all/"),
            ("list: all, text search", agent, f"{base}/lists/all/?q=parcel+4242"),
            (
                "conversation in a filtered list (workspace)",
                agent,
                f"{base}/conversations/{data['typical'].pk}/?list=needs-people&priority=high",
            ),
            ("conversation (typical thread)", agent, f"{base}/conversations/{data['typical'].pk}/"),
            ("conversation (2,000 messages)", agent, f"{base}/conversations/{data['long_thread'].pk}/"),
            (
                "conversation poll",
                agent,
                f"{base}/conversations/{data['long_thread'].pk}/poll/?after=0&since=0",
            ),
            ("list: snoozed", agent, f"{base}/lists/snoozed/"),
            ("usage (admin)", admin, f"{base}/usage/"),
            ("reports, last 7 days (admin)", admin, f"{base}/reports/"),
            # Every seeded conversation falls in a year: the report's one duration query reads all of them.
            ("reports, 366 days (admin)", admin, f"{base}/reports/?start={year_ago}&end={today}"),
            ("notifications", agent, f"{base}/notifications/"),
            # One contact per conversation: 10,000 contacts, each search reads them all (substring match).
            ("contacts", agent, f"{base}/contacts/"),
            ("contacts, page 200", agent, f"{base}/contacts/?page=200"),
            ("contacts, search", agent, f"{base}/contacts/?q=customer+4242"),
            ("contact page", agent, f"{base}/contacts/{data['typical'].contact_id}/"),
            *search_pages(agent, base, data),
        ]
        results = []
        for name, client, url in pages:
            results.append({"page": name, **measure(client, url, args.repeat)})
    finally:
        for path in workdir.iterdir():
            path.unlink()
        workdir.rmdir()

    print(
        f"Seeded {data['conversations']:,} conversations and {data['messages']:,} messages in {seeded_s:.1f} s "
        f"(SQLite, bulk_create). {args.repeat} requests per page after a warm-up; server time through the "
        f"Django test client. Load average before the run: {load_before}, after: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}."
    )
    width = max(len(r["page"]) for r in results)
    print(f"{'page':<{width}}  {'p50 ms':>7}  {'p95 ms':>7}  {'queries':>7}")
    for r in results:
        print(f"{r['page']:<{width}}  {r['p50_ms']:>7.1f}  {r['p95_ms']:>7.1f}  {r['queries']:>7}")
    worst = max(r["p95_ms"] for r in results)
    print(f"worst p95: {worst:.1f} ms (goal < 100 ms)")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "seed_seconds": seeded_s}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
