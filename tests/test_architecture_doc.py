"""docs/architecture.md stays true: its contract list is the import-linter contracts of pyproject.toml, every
package its tables name exists, and every captain package and module is in a table."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "architecture.md").read_text()


def _contract_names() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return [contract["name"] for contract in config["tool"]["importlinter"]["contracts"]]


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", DOC, flags=re.S | re.M)
    assert match, f"docs/architecture.md has no '## {title}' section"
    return match.group(1)


def _table_names() -> set[str]:
    """Every dotted name in the first column of the package tables."""
    names: set[str] = set()
    for line in _section("Packages: what each owns, what it may import").splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([a-z_]+(?:\.[a-z_]+)*)`", line.split("|")[1]))
    return names


def test_the_documented_contracts_are_the_enforced_ones() -> None:
    documented = re.findall(r"^- (.+)$", _section("Contracts"), flags=re.M)
    assert documented == _contract_names()


def test_every_documented_package_exists() -> None:
    missing = sorted(name for name in _table_names() if importlib.util.find_spec(name) is None)
    assert missing == []


def test_every_captain_package_and_module_is_documented() -> None:
    """A new top-level captain package or module (a new domain, a new shared helper) gets a row."""
    documented = _table_names()
    captain = ROOT / "captain"
    found = {
        f"captain.{path.stem if path.suffix == '.py' else path.name}"
        for path in captain.iterdir()
        if (path.suffix == ".py" and path.stem != "__init__" and path.stem != "apps")
        or (path.is_dir() and (path / "__init__.py").exists() and path.name != "migrations")
    }
    # `captain.api` is documented through its `urls` module (the package holds only the URL table and errors).
    undocumented = sorted(
        name
        for name in found
        if name not in documented and not any(d.startswith(f"{name}.") for d in documented)
    )
    assert undocumented == []
