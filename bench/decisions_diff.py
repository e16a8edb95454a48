"""Compare two `python -m bench.routing --decisions` files turn by turn, ignoring what depends on the clock.

    python -m bench.decisions_diff var/before.jsonl var/after.jsonl

Prints the number of turns compared and every turn whose route or decisions differ (latency is ignored);
exits 1 when anything differs, so a refactor can be checked to change no routing decision.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

CLOCK_FIELDS = ("latency_ms",)


def _turns(path: Path) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    turns = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        for decision in row["decisions"]:
            for name in CLOCK_FIELDS:
                decision.pop(name, None)
        turns[(row["strategy"], row["pass"], row["conversation"], row["turn"])] = row
    return turns


def diff(before: Path, after: Path) -> list[str]:
    old, new = _turns(before), _turns(after)
    problems = [f"only in {before.name}: {key}" for key in old.keys() - new.keys()]
    problems += [f"only in {after.name}: {key}" for key in new.keys() - old.keys()]
    for key in sorted(old.keys() & new.keys()):
        if old[key] != new[key]:
            fields = sorted(
                k for k in old[key].keys() | new[key].keys() if old[key].get(k) != new[key].get(k)
            )
            problems.append(f"{key}: differs in {', '.join(fields)}")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    before, after = Path(argv[0]), Path(argv[1])
    problems = diff(before, after)
    compared = len(_turns(before).keys() & _turns(after).keys())
    for line in problems:
        print(line)
    print(f"{compared} turns compared, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
