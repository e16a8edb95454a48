"""One search over an account's conversations, messages and contacts (the dashboard's search page and the
REST API's `search/`).

Message text is searched through a full-text index (migration 0018): SQLite's FTS5 with the trigram tokenizer
(any substring of three characters or more, Chinese text included, any case), PostgreSQL's `simple` text-search
vector with a GIN index (words and word prefixes; a term in Chinese, which has no spaces between words, is
matched as a substring). Contacts are matched by substring of their name, e-mail or phone (an e-mail's or a
phone's fragment is what agents type), conversations by `#id`, by their contact or by their messages.

The query is reduced to its words before it reaches SQL: quotes, `*`, `-`, `NEAR`, `AND`/`OR` and any other
operator character are only separators here, so no input can make the full-text parser fail, and a long query
is cut to its first `MAX_TERMS` words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from helpdesk.models import Contact, Conversation, Message

from .contacts import contacts_filtered
from .visibility import visible_conversations_q

MAX_QUERY_CHARS = 200
"""What is read of the search box: longer text is cut (no message search needs more), never an error."""
MAX_TERMS = 8
MAX_TERM_CHARS = 64
MESSAGE_CANDIDATES = 500
"""Newest matching messages read from the index before the filters: results are the newest matches."""
RESULTS = 20
CONTACT_RESULTS = 10
CONTACT_CANDIDATES = 200
"""Contacts whose conversations are searched too (the newest first)."""
SNIPPET_CHARS = 160

_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_OPERATORS = frozenset({"and", "or", "not", "near"})


def search_terms(text: str) -> list[str]:
    """The words of a search, lower-cased and without duplicates: what is matched (every term must match)."""
    words = _WORD.findall(text.replace("\x00", " ")[:MAX_QUERY_CHARS].lower())
    terms: list[str] = []
    for word in words:
        # A bare AND/OR/NOT/NEAR typed between words means "both words" here, as it reads.
        if word in _OPERATORS and len(words) > 1:
            continue
        term = word[:MAX_TERM_CHARS]
        if term not in terms:
            terms.append(term)
    return terms[:MAX_TERMS]


@dataclass(frozen=True)
class SearchFilters:
    """Filters on the conversations the results belong to (messages are filtered by their conversation)."""

    status: str = ""
    inbox_id: int | None = None
    assignee_id: int | None = None
    label_id: int | None = None

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> SearchFilters:
        def as_int(name: str) -> int | None:
            value = (params.get(name) or "").strip()
            return int(value) if value.isascii() and value.isdigit() and len(value) < 19 else None

        status = params.get("status") or ""
        return cls(
            status=status if status in Conversation.Status.values else "",
            inbox_id=as_int("inbox"),
            assignee_id=as_int("assignee"),
            label_id=as_int("label"),
        )

    def as_query(self) -> dict[str, str]:
        pairs = {
            "status": self.status,
            "inbox": self.inbox_id,
            "assignee": self.assignee_id,
            "label": self.label_id,
        }
        return {k: str(v) for k, v in pairs.items() if v}

    def conversation_q(self, prefix: str = "") -> Q:
        q = Q()
        if self.status:
            q &= Q(**{f"{prefix}status": self.status})
        if self.inbox_id:
            q &= Q(**{f"{prefix}inbox_id": self.inbox_id})
        if self.assignee_id:
            q &= Q(**{f"{prefix}assignee_id": self.assignee_id})
        if self.label_id:
            q &= Q(**{f"{prefix}labels__id": self.label_id})
        return q

    @property
    def active(self) -> bool:
        return bool(self.as_query())


@dataclass
class SearchResults:
    query: str
    terms: list[str]
    conversations: list[Conversation] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    contacts: list[Contact] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.conversations or self.messages or self.contacts)


def _message_select(account_id: int, terms: list[str], columns: str) -> tuple[str, list[int | str]] | None:
    """SELECT `columns` FROM the account's messages (activity lines left out) holding every term, through the
    full-text index; None on SQLite when every term is under three characters (the trigram index cannot look
    those up)."""
    if connection.vendor == "postgresql":
        words = [t for t in terms if not _CJK.search(t)]
        substrings = [t for t in terms if _CJK.search(t)]
        where = ["m.account_id = %s", "m.message_type <> 'activity'"]
        params: list[int | str] = [account_id]
        if words:
            # Word prefixes ("refun" finds "refund"); terms hold only word characters, so the tsquery parses.
            where.append("to_tsvector('simple'::regconfig, m.content) @@ to_tsquery('simple', %s)")
            params.append(" & ".join(f"'{w}':*" for w in words))
        for term in substrings:
            where.append("m.content ILIKE %s")
            params.append(f"%{term}%")
        return f"SELECT {columns} FROM helpdesk_message m WHERE {' AND '.join(where)}", params
    indexed = [t for t in terms if len(t) >= 3]
    short = [t for t in terms if len(t) < 3]
    if not indexed:
        return None
    # Each term quoted: FTS5 reads it as a plain string (terms hold only word characters, no quote).
    match = " AND ".join(f'"{t}"' for t in indexed)
    extra = "".join(" AND m.content LIKE %s" for _ in short)
    sql = (
        # CROSS JOIN: SQLite keeps the index as the outer loop (else it may scan messages and probe the index).
        f"SELECT {columns} FROM helpdesk_message_fts f CROSS JOIN helpdesk_message m ON m.id = f.rowid "
        f"WHERE helpdesk_message_fts MATCH %s AND m.account_id = %s AND m.message_type <> 'activity'{extra}"
    )
    return sql, [match, account_id, *[f"%{t}%" for t in short]]


def _scanned_messages(account_id: int, terms: list[str]) -> QuerySet[Message]:
    """The same match without the index: one- and two-character terms on SQLite (a two-character Chinese word)."""
    rows = Message.objects.filter(account_id=account_id).exclude(message_type=Message.Type.ACTIVITY)
    for term in terms:
        rows = rows.filter(content__icontains=term)
    return rows


def message_ids_matching(
    *, account_id: int, terms: list[str], limit: int = MESSAGE_CANDIDATES
) -> list[tuple[int, int]]:
    """(message id, conversation id) of the account's messages (notes included, activity lines not) holding
    every term, newest first."""
    if not terms:
        return []
    select = _message_select(account_id, terms, "m.id, m.conversation_id")
    if select is None:
        # A scan of the account's newest messages, stopped at `limit` matches.
        rows = _scanned_messages(account_id, terms).order_by("-id")
        return list(rows.values_list("id", "conversation_id")[:limit])
    sql, params = select
    with connection.cursor() as cursor:
        # On SQLite the index hands out rowids newest first (ORDER BY f.rowid), so LIMIT stops the read early.
        order = "m.id" if connection.vendor == "postgresql" else "f.rowid"
        cursor.execute(f"{sql} ORDER BY {order} DESC LIMIT %s", [*params, limit])
        return [(row[0], row[1]) for row in cursor.fetchall()]


def conversations_with_messages_q(*, account_id: int, text: str) -> Q:
    """Conversations with a message holding every word of `text` (the conversation lists' search box): all of
    them, not only the newest, so folder counts stay exact."""
    terms = search_terms(text)
    if not terms:
        return Q(pk__in=[])
    select = _message_select(account_id, terms, "m.conversation_id")
    if select is None:
        return Q(pk__in=_scanned_messages(account_id, terms).values("conversation_id"))
    sql, params = select
    return Q(pk__in=RawSQL(sql, params))


def snippet(content: str, terms: list[str]) -> str:
    """The part of a message around its first matching term."""
    lowered = content.lower()
    hits = [i for i in (lowered.find(t) for t in terms) if i >= 0]
    start = max(0, min(hits) - SNIPPET_CHARS // 3) if hits else 0
    text = content[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + text + ("…" if start + SNIPPET_CHARS < len(content) else "")


def _conversation_id(query: str) -> int | None:
    digits = query.strip().removeprefix("#")
    return int(digits) if digits.isascii() and digits.isdigit() and len(digits) < 19 else None


def _contacts(account_id: int, query: str) -> list[Contact]:
    """The newest contacts matching the text (name, e-mail, phone, #id), without the list page's conversation
    counts: their ids find conversations, the first few are shown."""
    return list(
        contacts_filtered(account_id=account_id, query=query)
        .order_by("-created_at", "-pk")
        .only("id", "name", "email", "phone", "created_at")[:CONTACT_CANDIDATES]
    )


def search(
    *, account_id: int, query: str, filters: SearchFilters | None = None, user: Any | None = None
) -> SearchResults:
    """Conversations (by id, contact or message), the newest matching messages and the matching contacts of
    one account; never another account's row, and for `user` only the conversations (and their messages) of
    the inboxes they see (helpdesk.selectors.visibility). Five queries whatever the data size: contacts, message index,
    messages, conversations, their labels."""
    filters = filters or SearchFilters()
    query = query.replace("\x00", "").strip()[:MAX_QUERY_CHARS]
    results = SearchResults(query=query, terms=search_terms(query))
    if not query:
        return results
    contacts = _contacts(account_id, query)
    results.contacts = contacts[:CONTACT_RESULTS]
    hits = message_ids_matching(account_id=account_id, terms=results.terms)
    # A label filter joins the labels table: rows could repeat, hence DISTINCT only then.
    distinct = bool(filters.label_id)
    messages = (
        Message.objects.filter(pk__in=[m for m, _ in hits], account_id=account_id)
        .filter(filters.conversation_q("conversation__"))
        .filter(visible_conversations_q(account_id=account_id, user=user, prefix="conversation__"))
        .select_related("conversation__contact", "sender_user")
        .order_by("-id")
    )
    results.messages = list((messages.distinct() if distinct else messages)[:RESULTS])
    for message in results.messages:
        message.snippet = snippet(message.content, results.terms)  # type: ignore[attr-defined]  # for the template
    match = Q(pk__in={c for _, c in hits}) | Q(contact_id__in=[c.pk for c in contacts])
    number = _conversation_id(query)
    if number is not None:
        match |= Q(pk=number)
    conversations = (
        Conversation.objects.filter(account_id=account_id)
        .filter(match)
        .filter(filters.conversation_q())
        .filter(visible_conversations_q(account_id=account_id, user=user))
        .select_related("contact", "inbox", "assignee")
        .prefetch_related("labels")
        .order_by("-last_activity_at", "-id")
    )
    results.conversations = list((conversations.distinct() if distinct else conversations)[:RESULTS])
    return results
