"""Do the model's drafted phrases help this assistant's router? The product checks it on messages whose node it
already knows, and uses unreviewed drafts only when they do (`CAPTAIN["ROUTING_UNREVIEWED_DRAFTS"] = "auto"`).

Drafted phrases are a guess of how customers talk, written by the assistant's model from a scenario's texts. On
descriptions-only benchmark graphs the bundled 0.5B model's drafts lowered accuracy by 1.2-5.5 points, while a
capable model's drafts, or drafts for a domain the encoder reads poorly, may help. Which one holds differs per
assistant, so each assistant is checked on its own labelled messages: the builder's example phrases and the
examples a person accepted (drafts and corrections from re-routes, hand-backs and takeovers).

Leave-one-out: each labelled message is routed from triage by the encoder's evidence (the semantic judgement, no
model call) with its own text removed from its node, once with the node texts in use without unreviewed drafts
and once with them. Drafts are used when they route at least `MIN_GAIN` more of the labelled messages right
(and `MIN_GAIN_SHARE` of them), on at least `MIN_LABELLED` messages; otherwise they stay suggestions. The
figures are kept on the assistant's routing configuration and shown in the admin.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from django.utils import timezone

from captain.assistants.models import Assistant
from captain.routing.models import RoutingConfig, RoutingExample, RoutingNode
from captain.runtime.routing import DecisionRequest, Encoder, Graph, OursStrategy, TieBreak

from .routing import routing_graph_with
from .routing_examples import examples_in_use

logger = logging.getLogger(__name__)

MIN_LABELLED = 10
"""Fewer labelled messages than this: no verdict (drafts stay suggestions)."""
MIN_GAIN = 1
MIN_GAIN_SHARE = 0.05
"""Drafts must route at least this many more labelled messages right, and this share of them."""


@dataclass(frozen=True)
class DraftCheck:
    labelled: int
    right_without: int
    right_with: int
    drafts: int
    """Unreviewed drafted phrases the check would add (0: nothing to check)."""

    @property
    def helps(self) -> bool:
        gain = self.right_with - self.right_without
        return (
            self.drafts > 0
            and self.labelled >= MIN_LABELLED
            and gain >= MIN_GAIN
            and gain >= MIN_GAIN_SHARE * self.labelled
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "checked_at": timezone.now().isoformat(),
            "labelled": self.labelled,
            "right_without": self.right_without,
            "right_with": self.right_with,
            "drafts": self.drafts,
            "helps": self.helps,
        }


def labelled_messages(assistant: Assistant) -> list[tuple[str, str]]:
    """(text, node key) of every message whose node a person stated: builder's examples, accepted examples."""
    found: dict[tuple[str, str], None] = {}
    for key, examples in RoutingNode.objects.filter(assistant=assistant).values_list("key", "examples"):
        for text in examples or []:
            if str(text).strip():
                found[(str(text), key)] = None
    accepted = RoutingExample.objects.filter(assistant=assistant, status=RoutingExample.Status.ACCEPTED)
    for text, key in accepted.values_list("text", "key"):
        found[(text, key)] = None
    return list(found)


def _semantic(graph: Graph) -> Graph:
    """The graph with every node judged by the encoder: examples only change the encoder's evidence."""
    nodes = {key: replace(node, mode=None, rules=[]) for key, node in graph.nodes.items()}
    return replace(graph, nodes=nodes, default_mode="semantic")


def _right(graph: Graph, labelled: list[tuple[str, str]], strategy: OursStrategy) -> int:
    right = 0
    for text, key in labelled:
        node = graph.nodes.get(key)
        if node is None:
            continue
        without = replace(node, examples=[e for e in node.examples if e != text])
        left_out = replace(graph, nodes={**graph.nodes, key: without})
        decision = strategy.decide(DecisionRequest(left_out, left_out.root, text, [], "after_input"))
        right += decision.target == key
    return right


def drafts_check(*, assistant: Assistant, encoder: Encoder) -> DraftCheck | None:
    """Run the check and keep its figures on the assistant's routing configuration. None: graph routing is off
    for the assistant (no configuration to keep them on)."""
    config = RoutingConfig.objects.filter(assistant=assistant).first()
    if config is None:
        return None
    without = examples_in_use(assistant, unreviewed=False)
    with_drafts = examples_in_use(assistant, unreviewed=True)
    drafts = sum(len(texts) for texts in with_drafts.values()) - sum(len(t) for t in without.values())
    labelled = labelled_messages(assistant)
    strategy = OursStrategy(encoder=encoder, tiebreak=TieBreak.NONE)
    check = DraftCheck(labelled=len(labelled), right_without=0, right_with=0, drafts=drafts)
    if drafts and len(labelled) >= MIN_LABELLED:
        check = replace(
            check,
            right_without=_right(_semantic(routing_graph_with(assistant, without)), labelled, strategy),
            right_with=_right(_semantic(routing_graph_with(assistant, with_drafts)), labelled, strategy),
        )
    RoutingConfig.objects.filter(pk=config.pk).update(drafts_check=check.as_dict())
    logger.info("routing drafts check: assistant %s: %s", assistant.pk, check)
    return check


def drafts_check_run(*, assistant_id: int) -> bool | None:
    """The task's body: check one assistant (gone, routing off or no encoder installed: None)."""
    from captain.knowledge.services.retrieval import encoder_available, get_encoder

    assistant = Assistant.objects.filter(pk=assistant_id).first()
    if assistant is None or not encoder_available():
        return None
    check = drafts_check(assistant=assistant, encoder=get_encoder())
    return None if check is None else check.helps
