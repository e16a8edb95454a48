"""The workspace around an open conversation: which list it was opened from, that list beside it, and where an
agent goes after resolving, snoozing or handing a conversation back (the next conversation of the same list).

The list travels in the query string (`?list=needs-people&inbox=3&q=...`, the list page's own filters), so two
tabs can work two different lists and a link or a reload keeps its place. A conversation opened without one (a
notification, a bookmark) belongs to the list of its status (`dashboard.folder_of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest, QueryDict
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

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


def page_query(request: HttpRequest) -> QueryDict:
    """The query of the page the agent is on: for a one-click action sent by htmx, that of the conversation
    page (htmx names it in `HX-Current-URL`; the action's own URL may carry no list), else the request's."""
    current = request.headers.get("HX-Current-URL", "")
    if current:
        return QueryDict(urlsplit(current).query)
    return request.GET


def list_context(request: HttpRequest, conversation: Conversation) -> ListContext:
    query = page_query(request)
    folder = dashboard.FOLDERS.get(query.get("list", "")) or dashboard.folder_of(conversation)
    return ListContext(folder=folder, filters=dashboard.ListFilters.from_query(query))


def came_from(request: HttpRequest) -> str | None:
    """The page a notification was opened from (`?from=`, which the bell and the notifications page add to
    their links): the conversation page offers a way back to it. Only a path of this site, never elsewhere."""
    target = request.GET.get("from", "")
    if not target.startswith("/") or target.startswith("//"):
        return None
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return None
    return target


def shown_next(request: HttpRequest) -> int | None:
    """The "next" conversation the page showed (a form's `next`, else the page's `?next=`)."""
    value = request.POST.get("next", "") or page_query(request).get("next", "")
    return int(value) if value.isdigit() else None


@dataclass(frozen=True)
class Workspace:
    """What the conversation page shows around the thread: the list pane, the back link, previous and next."""

    context: ListContext
    page: dashboard.ConversationPage
    list_url: str
    previous_url: str | None
    next_url: str | None
    next_id: int | None
    """The conversation after this one as the page shows it: actions that finish this one go on to it."""


def workspace(
    *,
    account_id: int,
    user: AbstractBaseUser,
    context: ListContext,
    conversation_id: int,
    shown: int | None = None,
) -> Workspace:
    """The list's first page (for the pane) and the neighbours of the open conversation in it. Neighbours come
    from the page already fetched: no query of their own. `shown` is the "next" this page showed before a
    reply reloaded it: it stays the next while it is in the list (see `next_conversation_id`)."""
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
    if shown in ids and shown != conversation_id:
        following = shown
    return Workspace(
        context=context,
        page=page,
        list_url=context.list_url(account_id),
        previous_url=context.conversation_url(account_id, previous) if previous else None,
        next_url=context.conversation_url(account_id, following) if following else None,
        next_id=following,
    )


def next_conversation_id(
    *, account_id: int, user: AbstractBaseUser, context: ListContext, conversation_id: int, shown: int | None
) -> int | None:
    """Which conversation to go on to once this one is done. `shown` is the "next" the page showed: what the
    agent expects, even when their reply has since moved this conversation within the list (a reply ends its
    wait, and waiting lists put those last); used while it is still in the list. Otherwise the one after this
    conversation in the list, else the one before; None when nothing else is in the list."""
    ids = dashboard.queue_ids(
        account_id=account_id, user=user, folder=context.folder, filters=context.filters
    )
    if shown in ids and shown != conversation_id:
        return shown
    if conversation_id not in ids:
        return ids[0] if ids else None
    at = ids.index(conversation_id)
    if at + 1 < len(ids):
        return ids[at + 1]
    return ids[at - 1] if at > 0 else None
