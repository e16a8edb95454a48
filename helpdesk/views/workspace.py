"""The workspace around an open conversation: which list it was opened from, that list beside it, and where an
agent goes after resolving, snoozing or handing a conversation back (the next conversation of the same list).

The list travels in the query string (`?list=needs-people&inbox=3&q=...`, the list page's own filters), so two
tabs can work two different lists and a link or a reload keeps its place. A conversation opened without one (a
notification, a bookmark) belongs to the list of its status (`dashboard.folder_of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest
from django.urls import reverse

from helpdesk.models import Conversation
from helpdesk.selectors import dashboard

QUEUE_ACTIONS = frozenset({"resolve", "snooze", "hand_back"})
"""Actions after which the conversation is done for this agent: the workspace moves on to the next one."""


@dataclass(frozen=True)
class ListContext:
    """The list an open conversation belongs to, as the agent filtered it."""

    folder: dashboard.Folder
    filters: dashboard.ListFilters

    @property
    def query(self) -> str:
        """`list=...` and the filters: appended to every workspace link so the list goes along."""
        return urlencode({"list": self.folder.key, **self.filters.as_query()})

    def list_url(self, account_id: int) -> str:
        url = reverse("dashboard:conversation-list", args=[account_id, self.folder.key])
        filters = urlencode(self.filters.as_query())
        return f"{url}?{filters}" if filters else url

    def conversation_url(self, account_id: int, conversation_id: int) -> str:
        url = reverse("dashboard:conversation-detail", args=[account_id, conversation_id])
        return f"{url}?{self.query}"


def list_context(request: HttpRequest, conversation: Conversation) -> ListContext:
    folder = dashboard.FOLDERS.get(request.GET.get("list", "")) or dashboard.folder_of(conversation)
    return ListContext(folder=folder, filters=dashboard.ListFilters.from_query(request.GET))


@dataclass(frozen=True)
class Workspace:
    """What the conversation page shows around the thread: the list pane, the back link, previous and next."""

    context: ListContext
    page: dashboard.ConversationPage
    list_url: str
    previous_url: str | None
    next_url: str | None


def workspace(
    *, account_id: int, user: AbstractBaseUser, context: ListContext, conversation_id: int
) -> Workspace:
    """The list's first page (for the pane) and the neighbours of the open conversation in it. Neighbours come
    from the page already fetched: no query of their own."""
    page = dashboard.conversation_page(
        account_id=account_id, user=user, folder=context.folder, filters=context.filters, page=1
    )
    ids = [c.pk for c in page.conversations]
    previous = following = None
    if conversation_id in ids:
        at = ids.index(conversation_id)
        previous = ids[at - 1] if at > 0 else None
        following = ids[at + 1] if at + 1 < len(ids) else None
    elif ids:
        following = ids[0]
    return Workspace(
        context=context,
        page=page,
        list_url=context.list_url(account_id),
        previous_url=context.conversation_url(account_id, previous) if previous else None,
        next_url=context.conversation_url(account_id, following) if following else None,
    )


def next_conversation_url(
    *, account_id: int, user: AbstractBaseUser, context: ListContext, conversation_id: int
) -> str | None:
    """Where to go once this conversation is done: the one after it in the list (else the one before), read
    BEFORE the action changes the list. None when it was the list's only conversation."""
    previous, following = dashboard.queue_neighbours(
        account_id=account_id,
        user=user,
        folder=context.folder,
        filters=context.filters,
        conversation_id=conversation_id,
    )
    target = following or previous
    return context.conversation_url(account_id, target) if target else None
