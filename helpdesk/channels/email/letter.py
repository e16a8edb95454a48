"""A reply written as a letter: the inbox's greeting and sign-off around the text (helpdesk.channels.email.smtp).

The AI knows it writes an e-mail (its turn is told the channel), so it often opens with its own "Hi Ann," and
closes with "Best regards, ...". With a greeting or a sign-off set on the inbox, the customer would then read
two of each, so the AI's own salutation line and closing block are left out where the inbox has its own. Only the
AI's: a person's words are sent as they typed them. Only a short first line that is a salutation and a short
last block that starts with a closing phrase are taken, so a sentence such as "Thank you for waiting, the
parcel left today." stays.
"""

from __future__ import annotations

import re

_SALUTATION = re.compile(
    r"(?:(?:hi|hello|hey|dear|good (?:morning|afternoon|evening)|greetings)(?:\s+[^\n.?!,，]{1,40})?"
    r"|(?:您好|你好|尊敬的[^\n。？！,，]{1,20}))\s*[,!:，！：]?",
    re.IGNORECASE,
)
_CLOSING = re.compile(
    r"(?:(?:best|kind|warm|warmest|many)?\s*regards|best wishes|sincerely|yours(?: truly| sincerely)?"
    r"|cheers|thanks|many thanks|best|祝好|此致|此致敬礼|谢谢)[,.!，。！]?",
    re.IGNORECASE,
)
_CLOSING_LINES = 3
"""A closing block: the closing phrase and at most two lines after it (a name, a team)."""


def _without_salutation(lines: list[str]) -> list[str]:
    if len(lines) > 1 and _SALUTATION.fullmatch(lines[0].strip()):
        return lines[1:]
    return lines


def _without_closing(lines: list[str]) -> list[str]:
    for start in range(max(1, len(lines) - _CLOSING_LINES), len(lines)):
        if _CLOSING.fullmatch(lines[start].strip()):
            return lines[:start]
    return lines


def letter_text(text: str, *, name: str, greeting: str, sign_off: str, written_by_ai: bool) -> str:
    """`text` between the greeting (`{name}`: the customer's name, "there" without one) and the sign-off."""
    body = text.strip()
    if written_by_ai:
        lines = body.splitlines()
        if greeting.strip():
            lines = _without_salutation(lines)
        if sign_off.strip():
            lines = _without_closing(lines)
        body = "\n".join(lines).strip() or body
    opening = greeting.replace("{name}", name.strip() or "there").strip()
    return "\n\n".join(part for part in (opening, body, sign_off.strip()) if part) + "\n"
