"""The routing graph: candidates are edges plus global nodes, and invalid graphs say what is wrong."""

from __future__ import annotations

import pytest

from captain.runtime.routing import HUMAN, Graph, GraphError, Node

from .support import rule


def nodes():
    return [Node("assistant", "Triage"), Node("a", "A"), Node("b", "B"), Node("restart", "Restart")]


def test_default_is_the_star_plus_people():
    graph = Graph.build(nodes())
    assert graph.candidates("assistant") == ["a", "b", "restart", HUMAN]
    assert graph.candidates("a") == ["assistant", HUMAN]
    assert graph.candidates(HUMAN) == []


def test_candidates_are_the_edges_plus_global_nodes_never_the_node_itself():
    graph = Graph.build(nodes(), [("assistant", "a"), ("a", "b")], global_keys=["restart"])
    assert graph.candidates("a") == ["b", "restart", HUMAN]
    assert graph.candidates("b") == ["restart", HUMAN]
    assert graph.candidates("restart") == [HUMAN]


def test_invalid_graphs_list_every_problem():
    bad = [*nodes(), Node("a", "duplicate")]
    bad[0].rules = [rule("regex", "(", "a")]
    with pytest.raises(GraphError) as exc:
        Graph.build(bad, [("assistant", "a"), ("a", "nowhere"), ("b", "b")], global_keys=["ghost"])
    text = str(exc.value)
    for expected in (
        "duplicate node key 'a'",
        "global node 'ghost' is not a node",
        "unknown node 'nowhere'",
        "a node cannot route to itself",
        "invalid regex",
    ):
        assert expected in text


def test_a_rule_off_the_nodes_edges_is_invalid():
    ns = nodes()
    ns[1].rules = [rule("exact", "go", "b")]
    with pytest.raises(GraphError, match="target 'b' is not an edge of 'a'"):
        Graph.build(ns, [("assistant", "a"), ("a", "assistant")])
