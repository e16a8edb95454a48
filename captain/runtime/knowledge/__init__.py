"""Answering from the team's knowledge (no Django): the sources found for a turn, the prompt block that puts them
before the model, the gate that decides what happens when nothing was found, the deterministic grounding check of
a reply, and the citations of the sources it used. `KnowledgeAnswerer` ties them around the agent in charge.

    answerer = KnowledgeAnswerer(inner=AgentAnswerer(...), base=search, settings=KnowledgeSettings(...), gate=gate)
    TeamRunner(team=..., strategy=..., answer=answerer)
"""

from .answerer import KnowledgeAnswerer, KnowledgeSettings, KnowledgeStep
from .citations import cited_numbers, strip_markers
from .gate import Gate, GateVerdict, TopicGate
from .grounding import Evidence, unsupported_facts
from .sources import KnowledgeBase, Retrieval, Source, sources_block
from .tokens import tokens

__all__ = [
    "Evidence",
    "Gate",
    "GateVerdict",
    "KnowledgeAnswerer",
    "KnowledgeBase",
    "KnowledgeSettings",
    "KnowledgeStep",
    "Retrieval",
    "Source",
    "TopicGate",
    "cited_numbers",
    "sources_block",
    "strip_markers",
    "tokens",
    "unsupported_facts",
]
