"""The dashboard's conversation lists: folders, filters and one page of a folder. Each read returns everything
a page needs in a fixed number of queries, whatever the number of conversations or messages (tests/dashboard
asserts the bounds; bench/dashboard_render.py times them on 10,000 conversations and 100,000 messages)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.expressions import Combinable, OrderBy
from django.utils.translation import gettext_lazy as _

from helpdesk.models import Conversation, Inbox, Label, Message, Team

from .previews import files_preview
from .search import conversations_with_messages_q
from .sla import sla_labels
from .visibility import hidden_inboxes, visible_conversations_q

if TYPE_CHECKING:  # django-stubs-ext is a development requirement
    from django_stubs_ext import StrOrPromise

PAGE_SIZE = 50
PREVIEW_CHARS = 140


@dataclass(frozen=True)
class Folder:
    """One conversation list of the sidebar."""

    key: str
    title: StrOrPromise
    help: StrOrPromise
    oldest_first: bool = False
    """Waiting customers are served oldest first; the other lists show the most recent activity first."""
    wake_first: bool = False
    """Snoozed conversations are listed by wake-up time, the next to wake first."""

    def condition(self, user: AbstractBaseUser) -> Q:
        if self.key == "ai":
            return Q(status=Conversation.Status.PENDING)
        if self.key == "needs-people":
            # Handed to people and nobody took it: unassigned, or only given by the round-robin. A conversation
            # a person took (took over from the AI, or assigned) is theirs while they hold it ("Mine").
            return Q(status=Conversation.Status.OPEN) & (Q(taken_at__isnull=True) | Q(assignee__isnull=True))
        if self.key == "mine":
            return Q(assignee_id=user.pk) & ~Q(status=Conversation.Status.RESOLVED)
        if self.key == "unassigned":
            return Q(status=Conversation.Status.OPEN, assignee__isnull=True)
        if self.key == "snoozed":
            return Q(status=Conversation.Status.SNOOZED)
        if self.key == "all":
            return Q()
        return Q(status=Conversation.Status.RESOLVED)


FOLDERS: dict[str, Folder] = {
    f.key: f
    for f in (
        Folder(
            "needs-people",
            _("Needs people"),
            _("Handed to the team and nobody took it yet, oldest waiting first."),
            oldest_first=True,
        ),
        Folder("ai", _("AI is handling"), _("The AI answers these conversations.")),
        Folder("mine", _("Mine"), _("Assigned to you and not resolved.")),
        Folder("unassigned", _("Unassigned"), _("Need people and nobody is assigned."), oldest_first=True),
        Folder(
            "snoozed",
            _("Snoozed"),
            _("Put aside until a wake-up time (or the customer's next message)."),
            wake_first=True,
        ),
        Folder("resolved", _("Resolved"), _("Closed conversations.")),
        # One place to search everything (any status), most recent activity first.
        Folder(
            "all", _("All"), _("Every conversation, whatever its status: search here to search them all.")
        ),
    )
}


@dataclass(frozen=True)
class ListFilters:
    inbox_id: int | None = None
    label_id: int | None = None
    team_id: int | None = None
    priority: str = ""
    q: str = ""

    @classmethod
    def from_query(cls, params: Any) -> ListFilters:
        def as_int(name: str) -> int | None:
            value = (params.get(name) or "").strip()
            return int(value) if value.isdigit() else None

        priority = params.get("priority") or ""
        return cls(
            inbox_id=as_int("inbox"),
            label_id=as_int("label"),
            team_id=as_int("team"),
            priority=priority if priority in Conversation.Priority.values else "",
            q=(params.get("q") or "").strip()[:200],
        )

    def apply(self, conversations: QuerySet[Conversation], *, account_id: int) -> QuerySet[Conversation]:
        if self.inbox_id:
            conversations = conversations.filter(inbox_id=self.inbox_id)
        if self.label_id:
            conversations = conversations.filter(labels__id=self.label_id)
        if self.team_id:
            conversations = conversations.filter(team_id=self.team_id)
        if self.priority:
            conversations = conversations.filter(priority=self.priority)
        if self.q:
            match: Q | Combinable = (
                Q(contact__name__icontains=self.q)
                | Q(contact__email__icontains=self.q)
                | Q(escalation_reason__icontains=self.q)
                | conversations_with_messages_q(account_id=account_id, text=self.q)
            )
            if self.q.lstrip("#").isdigit():
                match |= Q(pk=int(self.q.lstrip("#")))
            conversations = conversations.filter(match)
        return conversations

    def as_query(self) -> dict[str, str]:
        """Non-empty filters as query parameters (for pagination and folder links)."""
        pairs = {
            "inbox": self.inbox_id,
            "label": self.label_id,
            "team": self.team_id,
            "priority": self.priority,
            "q": self.q,
        }
        return {k: str(v) for k, v in pairs.items() if v}


@dataclass
class ConversationPage:
    folder: Folder
    counts: dict[str, int]
    conversations: list[Conversation]
    page: int
    total: int

    @property
    def has_next(self) -> bool:
        return self.page * PAGE_SIZE < self.total

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def last_page(self) -> int:
        return max(1, -(-self.total // PAGE_SIZE))


def _visible(*, account_id: int, user: AbstractBaseUser) -> QuerySet[Conversation]:
    """The account's conversations the person sees (their inboxes; every one for an administrator)."""
    return Conversation.objects.filter(account_id=account_id).filter(
        visible_conversations_q(account_id=account_id, user=user)
    )


def folder_counts(*, account_id: int, user: AbstractBaseUser, filters: ListFilters) -> dict[str, int]:
    """Every folder's count in one aggregate query (the sidebar and the pager both use it)."""
    base = filters.apply(_visible(account_id=account_id, user=user), account_id=account_id)
    row = base.aggregate(
        **{key.replace("-", "_"): Count("id", filter=f.condition(user)) for key, f in FOLDERS.items()}
    )
    return {key: row[key.replace("-", "_")] or 0 for key in FOLDERS}


def conversation_page(
    *, account_id: int, user: AbstractBaseUser, folder: Folder, filters: ListFilters, page: int
) -> ConversationPage:
    """One page of a folder: counts (1 query), the page with contact, inbox and assignee (1), labels (1),
    the customer's last words in each row (1)."""
    counts = folder_counts(account_id=account_id, user=user, filters=filters)
    total = counts[folder.key]
    page = max(1, min(page, max(1, -(-total // PAGE_SIZE))))
    rows = list(
        _folder_rows(account_id=account_id, user=user, folder=folder, filters=filters)
        .select_related("contact", "inbox__account", "inbox__sla_policy", "assignee")
        .prefetch_related("labels")[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    )
    previews = _previews(rows)
    slas = sla_labels(rows)
    for conversation in rows:
        conversation.preview = previews.get(conversation.pk, "")  # type: ignore[attr-defined]  # for the template only, not a field
        conversation.sla = slas.get(conversation.pk)  # type: ignore[attr-defined]  # likewise
    return ConversationPage(folder=folder, counts=counts, conversations=rows, page=page, total=total)


def _folder_rows(
    *, account_id: int, user: AbstractBaseUser, folder: Folder, filters: ListFilters
) -> QuerySet[Conversation]:
    """The folder's conversations with its filters, in the order the list shows them."""
    conversations = filters.apply(_visible(account_id=account_id, user=user), account_id=account_id).filter(
        folder.condition(user)
    )
    order: list[str | OrderBy]
    if folder.oldest_first:
        order = [F("waiting_since").asc(nulls_last=True), "id"]
    elif folder.wake_first:
        order = [F("snoozed_until").asc(nulls_last=True), "id"]
    else:
        order = ["-last_activity_at", "-id"]
    return conversations.order_by(*order)


QUEUE_WINDOW = 200
"""How far down a list "the next conversation" is looked for: the agent works from the top of the list."""


def folder_of(conversation: Conversation) -> Folder:
    """The list a conversation opened without one (a link from a notification, a bookmark) belongs to: its
    back link and its "next conversation" come from there."""
    key = {
        Conversation.Status.PENDING: "ai",
        Conversation.Status.SNOOZED: "snoozed",
        Conversation.Status.RESOLVED: "resolved",
    }.get(Conversation.Status(conversation.status), "needs-people")
    return FOLDERS[key]


def queue_ids(*, account_id: int, user: AbstractBaseUser, folder: Folder, filters: ListFilters) -> list[int]:
    """The ids at the top of the list, in its order (one query, QUEUE_WINDOW ids at most): where the
    workspace looks for the next conversation."""
    rows = _folder_rows(account_id=account_id, user=user, folder=folder, filters=filters)
    return list(rows.values_list("id", flat=True)[:QUEUE_WINDOW])


def _previews(conversations: list[Conversation]) -> dict[int, str]:
    """The customer's last words in each conversation (its latest incoming message: what an agent needs, not
    the AI's handoff boilerplate that usually comes after it), else its latest public message (a conversation
    started from our side), in one query for the whole page (correlated subqueries on the index
    (conversation, created_at), evaluated for these rows only). A message of files alone (a reply or a customer's
    photo without a caption) is shown by its files' names, so the row does not look empty."""
    if not conversations:
        return {}
    public = Message.objects.filter(conversation_id=OuterRef("pk"), private=False).order_by("-id")
    incoming = public.filter(message_type=Message.Type.INCOMING)
    latest = public.exclude(message_type=Message.Type.ACTIVITY)
    rows = (
        Conversation.objects.filter(pk__in=[c.pk for c in conversations])
        .annotate(
            in_text=Subquery(incoming.values("content")[:1]),
            in_files=Subquery(incoming.values("attachments")[:1]),
            last_text=Subquery(latest.values("content")[:1]),
            last_files=Subquery(latest.values("attachments")[:1]),
        )
        .values_list("pk", "in_text", "in_files", "last_text", "last_files")
    )
    previews: dict[int, str] = {}
    for pk, in_text, in_files, last_text, last_files in rows:
        # No incoming message at all: the latest public one (the text column is never NULL for a message).
        text, files = (in_text, in_files) if in_text is not None else (last_text, last_files)
        previews[pk] = (text or files_preview(files))[:PREVIEW_CHARS]
    return previews


def filter_options(*, account_id: int, user: AbstractBaseUser | None = None) -> dict[str, list]:
    """Inboxes (those `user` sees), labels and teams of the account, for the filter bar."""
    inboxes = Inbox.objects.filter(account_id=account_id)
    if user is not None:
        inboxes = inboxes.exclude(pk__in=hidden_inboxes(account_id=account_id, user_id=user.pk).values("pk"))
    return {
        "inboxes": list(inboxes.order_by("name").only("id", "name")),
        "labels": list(Label.objects.filter(account_id=account_id).order_by("name")),
        "teams": list(Team.objects.filter(account_id=account_id).order_by("name").only("id", "name")),
    }
