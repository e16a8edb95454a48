"""A mail's HTML, sanitised for people to read (the AI reads the text: helpdesk.channels.email.mime).

nh3 (the Python binding of the Rust sanitiser ammonia, maintained and fast) keeps formatting, lists, tables and
links and drops everything that runs or reaches out: scripts, styles, forms, frames, event handlers, `javascript:`
and `data:` URLs. Images are dropped too: a remote image in a mail is how senders learn that it was opened (a
tracking pixel), and an inline one (`cid:`) is a part of the mail, not a URL a browser can load. Links open in a
new tab and tell the target nothing (`rel="noopener noreferrer nofollow"`).

The dashboard serves the result as a file with its own sandboxing Content-Security-Policy
(helpdesk.views.attachments), so even a sanitiser bug would run nothing.
"""

from __future__ import annotations

import nh3

MAX_HTML_CHARACTERS = 1_000_000
"""A longer HTML part is not kept (the text is): what a person reads is far shorter, and cleaning is linear."""

_TAGS = set(nh3.ALLOWED_TAGS) - {"img", "area", "map"}
_DROPPED_WITH_CONTENT = {
    "script",
    "style",
    "title",
    "head",
    "template",
    "noscript",
    "iframe",
    "object",
    "svg",
}


def sanitized_html(html: str) -> str:
    """`html` with only what is safe to show (see the module docstring); "" when nothing readable is left or it
    is longer than MAX_HTML_CHARACTERS."""
    if len(html) > MAX_HTML_CHARACTERS:
        return ""
    cleaned = nh3.clean(
        html,
        tags=_TAGS,
        clean_content_tags=_DROPPED_WITH_CONTENT,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
    return cleaned.strip()
