"""The dashboard's views read through selectors: no ORM in a view module (docs/architecture.md, the layers).

An AST scan of every module under `helpdesk/views/`, `captain/<domain>/views/` and `captain/dashboard/`. A view
validates, calls a selector (reads, `access_*`) or a service (writes) and lays the result out; it builds no
queryset and touches no manager. Flagged:

- a manager: `.objects`, `._default_manager`, `._base_manager`;
- a queryset method: `.filter(`, `.exclude(`, `.annotate(`, `.order_by(`, `.exists(` ... (and their async
  forms, `.aexists(` ...), whatever the receiver; `.first()`, `.last()`, `.all()` too (lists and dicts have none);
- a method shared with dicts, lists and strings only where it cannot be one of those: `.count()` without an
  argument, `.values(...)` with arguments, and `.get(` / `.update(` / `.delete(` / `.create(` / `.values()` on a
  chain that already is a queryset (a manager or one of the methods above before it): `request.GET.get(...)`,
  `counts.get(key)`, `FOLDERS.values()` pass;
- `.save(` (a write belongs to a service) and `.raw(` / `.extra(` / `.cursor(`;
- an import from `django.db.models` (expressions, aggregates, `Prefetch`, functions) but the types a signature
  may name (`QuerySet`, `Model`), `from django.db import models / connection / connections`, and
  `get_object_or_404` / `get_list_or_404` (an `access_*` selector fetches and authorizes in one call).

Each finding is listed as `path:line: what`.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

QUERYSET_METHODS = {
    "filter",
    "exclude",
    "annotate",
    "alias",
    "aggregate",
    "values_list",
    "order_by",
    "select_related",
    "prefetch_related",
    "only",
    "defer",
    "exists",
    "contains",
    "distinct",
    "select_for_update",
    "in_bulk",
    "get_or_create",
    "update_or_create",
    "bulk_create",
    "bulk_update",
    "latest",
    "earliest",
    "union",
    "intersection",
    "difference",
    "dates",
    "datetimes",
    "using",
    "first",
    "last",
    "all",
    "none",
    "raw",
    "extra",
}
"""Called on anything, these are queryset calls (a dict, list or str has none of them)."""

CHAIN_ONLY_METHODS = {"get", "update", "delete", "create", "values", "count", "iterator", "explain"}
"""Shared with dicts, lists and strings: queryset calls when the receiver already is a queryset chain."""

ASYNC_METHODS = {f"a{name}" for name in QUERYSET_METHODS | CHAIN_ONLY_METHODS} | {"asave", "adelete"}

MANAGERS = {"objects", "_default_manager", "_base_manager"}

MODEL_TYPES = {"QuerySet", "Model"}
"""Names from django.db.models a view may import for a signature."""

BANNED_SHORTCUTS = {"get_object_or_404", "get_list_or_404", "aget_object_or_404", "aget_list_or_404"}


def view_modules() -> list[Path]:
    modules = sorted((ROOT / "helpdesk" / "views").rglob("*.py"))
    modules += sorted(ROOT.glob("captain/*/views/**/*.py"))
    modules += sorted((ROOT / "captain" / "dashboard").rglob("*.py"))
    return modules


def _method(node: ast.AST) -> str | None:
    """The method's name when `node` is a call `<receiver>.<name>(...)`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _receiver(node: ast.AST) -> ast.AST | None:
    """What `node` is called or looked up on: `a.b` -> `a`, `a.b(...)` -> `a`, `a[...]` -> `a`."""
    if isinstance(node, ast.Attribute | ast.Subscript):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.value
    return None


def _is_queryset_chain(node: ast.AST | None) -> bool:
    """Whether an expression is (built on) a manager or a queryset method call: `X.objects`, `qs.filter(...)`,
    `X.objects.filter(...).order_by(...)`."""
    while node is not None:
        if isinstance(node, ast.Attribute) and node.attr in MANAGERS:
            return True
        if _method(node) in QUERYSET_METHODS | ASYNC_METHODS:
            return True
        node = _receiver(node)
    return False


def _orm_use(node: ast.AST) -> str | None:
    """Why this one node (not its receivers) is ORM use, or None."""
    if isinstance(node, ast.Attribute) and node.attr in MANAGERS:
        return "manager"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BANNED_SHORTCUTS:
        return "shortcut"
    name = _method(node)
    if name is None:
        return None
    assert isinstance(node, ast.Call)
    has_args = bool(node.args or node.keywords)
    if name in QUERYSET_METHODS | ASYNC_METHODS or name in ("save", "cursor"):
        return "call"
    if (name == "count" and not has_args) or (name == "values" and has_args):
        return "call"
    if name in CHAIN_ONLY_METHODS and _is_queryset_chain(_receiver(node)):
        return "call"
    return None


def _chain_text(node: ast.AST) -> str:
    """`RunArtifact.objects.filter(...).defer(...)`: the chain's names, arguments elided."""
    if isinstance(node, ast.Attribute):
        return f"{_chain_text(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        inner = "..." if node.args or node.keywords else ""
        return f"{_chain_text(node.func)}({inner})"
    if isinstance(node, ast.Subscript):
        return f"{_chain_text(node.value)}[...]"
    if isinstance(node, ast.Name):
        return node.id
    return "<expr>"


class _Finder(ast.NodeVisitor):
    """One finding per chain (`X.objects.filter(...).order_by(...)` is one ORM call), at its outermost node."""

    def __init__(self) -> None:
        self.findings: list[tuple[int, str]] = []
        self._reported: set[int] = set()

    def _add(self, node: ast.AST, what: str) -> None:
        self.findings.append((getattr(node, "lineno", 0), what))

    def _visit_chain(self, node: ast.AST) -> None:
        if id(node) not in self._reported and _orm_use(node) is not None:
            part: ast.AST | None = node
            while part is not None:  # its receivers are the same call, reported here
                self._reported.add(id(part))
                part = _receiver(part)
            kind = "write" if _method(node) == "save" else "ORM"
            self._add(node, f"{kind} `{_chain_text(node)}`")
        self.generic_visit(node)

    visit_Attribute = _visit_chain
    visit_Call = _visit_chain

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            if module == "django.db.models" or module.startswith("django.db.models."):
                if alias.name not in MODEL_TYPES:
                    self._add(node, f"import of `{module}.{alias.name}`")
            elif module == "django.db" and alias.name in ("models", "connection", "connections"):
                self._add(node, f"import of `django.db.{alias.name}`")
            elif alias.name in BANNED_SHORTCUTS:
                self._add(node, f"import of `{alias.name}` (use an `access_*` selector)")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == "django.db.models" or alias.name.startswith("django.db.models."):
                self._add(node, f"import of `{alias.name}`")


def orm_findings(source: str) -> list[tuple[int, str]]:
    finder = _Finder()
    finder.visit(ast.parse(source))
    return sorted(finder.findings)


def test_the_scan_covers_every_dashboard_view_module():
    names = {path.relative_to(ROOT).as_posix() for path in view_modules()}
    for expected in (
        "helpdesk/views/conversations.py",
        "captain/dashboard/choice.py",
        "captain/dashboard/live.py",
        "captain/dashboard/trace_tree.py",
        "captain/answering/views/debug_log.py",
        "captain/answering/views/live.py",
        "captain/copilot/views/copilot.py",
        "captain/knowledge/views/faq_review.py",
        "captain/playground/views/playground.py",
        "captain/routing/views/routing_corrections.py",
        "captain/memory/views/memory.py",
    ):
        assert expected in names


@pytest.mark.parametrize(
    "source",
    [
        "Run.objects.filter(pk=1)",
        "Run._default_manager.all()",
        "run_list(account_id=1).filter(pk=2).first()",
        "conversation.messages.all()",
        "entries.filter(status=s).count()",
        "rows.count()",
        "await runs.aexists()",
        "Run.objects.get(pk=1)",
        "ledger.values('date')",
        "run_list(account_id=1).order_by('id').values()",
        "form.save()",
        "from django.db.models import Exists, OuterRef",
        "from django.db.models.functions import Substr",
        "from django.shortcuts import get_object_or_404",
        "get_object_or_404(Run, pk=1)",
        "from django.db import connection",
    ],
)
def test_the_scan_flags_orm_use(source):
    assert orm_findings(source)


@pytest.mark.parametrize(
    "source",
    [
        "request.GET.get('page')",
        "request.POST.get('op', '')",
        "counts.get(key)",
        "FOLDERS.values()",
        "state.update(turns=[])",
        "text.count('x')",
        "session.pop('k', None)",
        "from django.db.models import QuerySet",
        "from django.db import transaction",
        "from django.shortcuts import redirect, render",
    ],
)
def test_the_scan_passes_plain_python(source):
    assert orm_findings(source) == []


def test_views_make_no_orm_calls():
    findings = []
    for path in view_modules():
        for line, what in orm_findings(path.read_text()):
            findings.append(f"{path.relative_to(ROOT).as_posix()}:{line}: {what}")
    per_file = Counter(finding.split(":", 1)[0] for finding in findings)
    summary = "\n".join(f"  {count:3d}  {name}" for name, count in sorted(per_file.items()))
    assert not findings, (
        f"{len(findings)} ORM uses in views; read through the domain's selectors (writes: its services):\n"
        + "\n".join(findings)
        + f"\nper file:\n{summary}"
    )
