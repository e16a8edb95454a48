"""Escalation reasons in the words of the people who read them.

A run's handoff reason is written for debugging: the router's rule number, similarity margins, the tie-break's
log-probabilities ("A or B?: log P(B)=-1.10 + 0.6 > ..."), the grounding check's findings. Agents read the
escalation reason in the lists and on the conversation page, where that maths only gets in the way, so the
reason that reaches `conversation_escalate` is translated here; the raw text stays in the run's debug log
(`Run.detail` and the route events of its spans). Reasons already written for people (an agent's own
`handoff_to_human` reason, credit and configuration problems, run errors) pass through unchanged.
"""

from __future__ import annotations

import re

ROUTER_PREFIX = "The router handed the conversation to people ("

ASKED_FOR_PERSON = "The customer asked for a person."
ROUTING_RULE = "A routing rule sends messages like this one to people."
ROUTED_TO_PEOPLE = "The AI's routing sent the conversation to people."
NOT_IN_KNOWLEDGE = "The AI could not find the answer in the knowledge."
NOT_GROUNDED = "The AI's answer stated things the knowledge does not support, so it was not sent ({facts})."

# The router's reason for a jump to people names how it decided: a builder's rule ("rule 2: keyword 'agent'")
# or the check that the customer asks for a person ("asks for a person (0.81, +0.12 over other requests)").
_RULE = re.compile(r"(^|[;(]\s*)rule \d+:")
_GROUNDING = re.compile(
    r"^The AI's reply stated (?P<facts>.+), which no source supports \(grounding check\)\.$"
)


# A model's own `handoff_to_human` reason is sometimes a label, not a sentence ("customer request",
# "user_requested_human", "Escalation"): agents read what it means.
_ASKED_LABEL = re.compile(
    r"^(the )?(customer|user|client|visitor)( has)?( explicitly)? (request(s|ed)?|asks?( for)?|asked( for)?|wants?)"
    r"( (a|an|to (talk|speak) (to|with)))?( (human|person|agent|people|staff|someone|representative|operator))?$"
    r"|^(human|agent|person|live agent)( (handoff|hand off|request(ed)?|needed|required))?$"
    r"|^(escalation|escalate|handoff|hand off|transfer)( to (a )?(human|person|agent|people))?$"
)


def _label(text: str) -> str:
    return " ".join(re.sub(r"[_\-.:!]+", " ", text.lower()).split())


def plain_handoff_reason(reason: str) -> str:
    """The escalation reason agents read for a run's handoff `reason` (see the module docstring)."""
    text = reason.strip()
    if text.startswith(ROUTER_PREFIX):
        detail = text[len(ROUTER_PREFIX) :]
        if _RULE.search(detail):
            return ROUTING_RULE
        if "asks for a person" in detail:
            return ASKED_FOR_PERSON
        return ROUTED_TO_PEOPLE
    if _ASKED_LABEL.match(_label(text)):
        return ASKED_FOR_PERSON
    if text == "Nothing in the knowledge answers the question.":
        return NOT_IN_KNOWLEDGE
    grounding = _GROUNDING.match(text)
    if grounding:
        facts = grounding.group("facts")
        return NOT_GROUNDED.format(facts=facts if len(facts) <= 200 else facts[:199] + "…")
    return text
