"""A picture of an assistant's routing graph for its admin page: server-rendered SVG, no script.

The picture is drawn from the same `Graph` a run uses (`captain.routing.services.routing.routing_graph`, or `star_graph`
when graph routing is off, exactly as `captain.answering.services.team` chooses), so it cannot show an edge, a mode or a
global node the runtime does not have. Only the teams come from the rows directly: the runtime graph does not
carry them, and `captain.answering.services.outcomes.handoff_team_id` reads them the same way (scenario's team, else the
node's team).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from captain.assistants.models import TRIAGE_KEY, Assistant, Scenario
from captain.routing.models import RoutingNode
from captain.routing.services.routing import routing_graph, star_graph
from captain.runtime.routing import HUMAN, Graph

NODE_WIDTH = 210
NODE_HEIGHT = 70
GAP_X = 40
GAP_Y = 80
MARGIN = 24
PER_ROW = 4
MAX_LABEL = 28
FIT_WIDTH = 900
"""Pixels: wider pictures are scaled to the admin's content column."""

MODE_LABELS = {
    "tool": "own model (handoff tools)",
    "router": "router model",
    "custom": "custom router",
    "semantic": "semantic",
}


@dataclass
class PictureNode:
    key: str
    title: str
    mode: str
    team: str
    is_global: bool
    terminal: bool
    x: float = 0.0
    y: float = 0.0
    row: int = 0


@dataclass
class Picture:
    """What the SVG shows, kept as data so tests can compare it with the runtime graph."""

    routing_on: bool
    nodes: list[PictureNode]
    edges: list[tuple[str, str, bool]]
    """(source, target, both directions)."""
    width: float
    height: float


def runtime_graph(assistant: Assistant) -> tuple[Graph, bool]:
    """The graph a run of `assistant` dispatches on, and whether graph routing is on."""
    graph = routing_graph(assistant)
    if graph is not None:
        return graph, True
    return star_graph(assistant), False


def _teams(assistant: Assistant) -> dict[str, str]:
    """Node key -> the team that picks up its escalations (scenario's team first, then the node's)."""
    teams = {
        key: name
        for key, name in RoutingNode.objects.filter(
            assistant=assistant, handoff_team__isnull=False
        ).values_list("key", "handoff_team__name")
    }
    teams.update(
        dict(
            Scenario.objects.filter(assistant=assistant, handoff_team__isnull=False).values_list(
                "key", "handoff_team__name"
            )
        )
    )
    return teams


def _short(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "\u2026"


def routing_picture(assistant: Assistant) -> Picture:
    graph, routing_on = runtime_graph(assistant)
    teams = _teams(assistant)
    triage_team = teams.get(TRIAGE_KEY, "")
    nodes: dict[str, PictureNode] = {}
    for key, node in graph.nodes.items():
        nodes[key] = PictureNode(
            key=key,
            title=node.title or key,
            mode="" if node.terminal else graph.mode_of(key),
            # An escalation at a node without its own team goes to the triage node's team (handoff_team_id).
            team=teams.get(key, "") or ("" if key == HUMAN else triage_team),
            is_global=node.is_global,
            terminal=node.terminal,
        )
    root = nodes.pop(graph.root, None)
    human = nodes.pop(HUMAN, None)
    middle = list(nodes.values())
    columns = max(1, min(PER_ROW, len(middle)))
    width = MARGIN * 2 + columns * NODE_WIDTH + (columns - 1) * GAP_X
    placed: list[PictureNode] = []

    def centre_row(row_nodes: list[PictureNode], row: int) -> None:
        span = len(row_nodes) * NODE_WIDTH + (len(row_nodes) - 1) * GAP_X
        left = (width - span) / 2
        for i, item in enumerate(row_nodes):
            item.x, item.y, item.row = (
                left + i * (NODE_WIDTH + GAP_X),
                MARGIN + row * (NODE_HEIGHT + GAP_Y),
                row,
            )
            placed.append(item)

    row = 0
    if root is not None:
        centre_row([root], row)
        row += 1
    for start in range(0, len(middle), PER_ROW):
        centre_row(middle[start : start + PER_ROW], row)
        row += 1
    if human is not None:
        centre_row([human], row)
        row += 1
    height = MARGIN * 2 + row * NODE_HEIGHT + max(0, row - 1) * GAP_Y
    edges: list[tuple[str, str, bool]] = []
    seen: set[tuple[str, str]] = set()
    for a, b in sorted(graph.edges):
        if (a, b) in seen:
            continue
        both = (b, a) in graph.edges
        seen |= {(a, b), (b, a)} if both else {(a, b)}
        edges.append((a, b, both))
    return Picture(routing_on=routing_on, nodes=placed, edges=edges, width=width, height=height)


def _anchor(node: PictureNode, towards: PictureNode) -> tuple[float, float]:
    """Where a line from `node` towards `towards` leaves the box (top/bottom edge between rows, sides within)."""
    cx = node.x + NODE_WIDTH / 2
    if towards.row > node.row:
        return cx, node.y + NODE_HEIGHT
    if towards.row < node.row:
        return cx, node.y
    return cx, node.y + NODE_HEIGHT  # same row: the curve leaves from below


def _edge_path(a: PictureNode, b: PictureNode) -> str:
    x1, y1 = _anchor(a, b)
    x2, y2 = _anchor(b, a)
    if a.row == b.row:
        bend = GAP_Y * 0.45 + abs(x2 - x1) * 0.08
        return f"M{x1:.0f},{y1:.0f} Q{(x1 + x2) / 2:.0f},{y1 + bend:.0f} {x2:.0f},{y2:.0f}"
    return f"M{x1:.0f},{y1:.0f} L{x2:.0f},{y2:.0f}"


def routing_svg(assistant: Assistant) -> SafeString:
    """The picture as an inline SVG (presentation attributes only: the content security policy refuses
    `style` attributes)."""
    picture = routing_picture(assistant)
    by_key = {node.key: node for node in picture.nodes}
    parts = [
        # A wide graph scales down to the column (viewBox keeps the proportions); a small one keeps its size.
        f'<svg xmlns="http://www.w3.org/2000/svg" class="routing-graph" role="img" '
        f'width="{"100%" if picture.width > FIT_WIDTH else f"{picture.width:.0f}"}" '
        f'viewBox="0 0 {picture.width:.0f} {picture.height:.0f}" font-family="sans-serif" font-size="12">',
        f"<title>Routing graph of {escape(assistant.name)}</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
    ]
    for a, b, both in picture.edges:
        if a not in by_key or b not in by_key:
            continue
        start = ' marker-start="url(#arrow)"' if both else ""
        parts.append(
            f'<path class="edge" data-edge="{escape(a)}-&gt;{escape(b)}" data-both="{int(both)}" '
            f'd="{_edge_path(by_key[a], by_key[b])}" fill="none" stroke="#555" stroke-width="1.3"'
            f'{start} marker-end="url(#arrow)"/>'
        )
    for node in picture.nodes:
        if node.terminal:
            fill, stroke = "#fde8e8", "#b44"
        elif node.key == TRIAGE_KEY:
            fill, stroke = "#e3effa", "#2a6ebb"
        else:
            fill, stroke = "#f4f4f4", "#666"
        dash = ' stroke-dasharray="6 4"' if node.is_global else ""
        kind = "triage" if node.key == TRIAGE_KEY else ("people" if node.terminal else "scenario")
        mode = MODE_LABELS.get(node.mode, node.mode)
        second = f"{node.key} \u00b7 {mode}" if mode else "hand over to people"
        if node.terminal:
            third = "reachable from every node"
        else:
            third = f"team: {node.team}" if node.team else "team: anyone"
            if node.is_global:
                third += " \u00b7 global"
        parts.append(
            f'<g class="node" data-node="{escape(node.key)}" data-kind="{kind}" data-mode="{escape(node.mode)}" '
            f'data-global="{int(node.is_global)}" data-team="{escape(node.team)}">'
            f"<title>{escape(node.title)} ({escape(node.key)})"
            f"{' — reachable from every node' if node.is_global else ''}</title>"
            f'<rect x="{node.x:.0f}" y="{node.y:.0f}" width="{NODE_WIDTH}" height="{NODE_HEIGHT}" rx="8" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"{dash}/>'
            f'<text x="{node.x + 10:.0f}" y="{node.y + 20:.0f}" font-weight="bold">{escape(_short(node.title))}</text>'
            f'<text x="{node.x + 10:.0f}" y="{node.y + 40:.0f}">{escape(_short(second))}</text>'
            f'<text x="{node.x + 10:.0f}" y="{node.y + 58:.0f}" fill="#444">{escape(_short(third))}</text>'
            "</g>"
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # every text above went through escape()
