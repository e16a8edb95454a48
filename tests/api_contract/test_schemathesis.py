"""Schemathesis against the real web server: every operation of /api/schema/, `--checks all`, the stateful phase
on the links it infers, as the demo administrator and as the demo agent, with a fixed seed.

The server (tests/support/demo_api.py) is the ASGI process `scripts/run` starts, on a SQLite database of its own
with the demo account and one object of each kind the API manages, so `.../<id>/` operations reach their logic:
path parameters take those ids 4 times in 5 and a generated value otherwise (unknown, zero, 2**64...). A DELETE
of `.../<id>/` always gets a spare object of its kind, so deleting does not leave the others with 404s only.

What must hold, for both roles: no 5xx (not_a_server_error), every status code, content type and body as the
schema documents them (status_code_conformance, content_type_conformance, response_schema_conformance). The
other checks (negative_data_rejection: invalid input accepted; positive_data_acceptance: valid input rejected;
use_after_free, ensure_resource_availability, ignored_auth, missing_required_header, unsupported_method...) are
printed with the operations they fail on and the reason, and do not fail the test. What they report, and why it
stays (November 2026):

- Invalid input accepted (negative_data_rejection). Paging: a `limit` or `offset` that is not a whole number
  (`offset=null`, `limit=false`, repeated) is ignored and the default applies, as DRF's LimitOffsetPagination does,
  on every list. Empty filters (`?status=`, `?applies_to=`, `?until=`, `?start=`) mean no filter. DRF's fields
  coerce scalars in bodies: a number where a string is documented (`"label": 0` is stored as "0"), "true", "0" or
  1 for a boolean, a numeric string for a number. All are read as the client meant or as absent; none stores
  something the documented type could not hold.
- Valid input rejected (positive_data_acceptance): rules a JSON Schema cannot state, answered 400 with the field
  and the reason. Uniqueness (a short code, a team or scenario key, a memory variable already used); ids that must
  exist in the account (`user_id`, `inbox_ids`, `handoff_team_id`, routing rules' scenarios, reroute keys); state
  (FAQ drafts from ready documents and resolved conversations, `snoozed_until` only with `snoozed`, an inbox
  served by another assistant, a scenario's key fixed at creation, a report range of at most 366 days); keys the
  account defines (custom attributes, conversation memory: the schema's free-form maps cannot list them); URLs the
  outbound policy refuses; choices only for a list attribute; a reply or note sent as multipart needs its text or a
  file (each is optional on its own). Four the schema could still state: `parameters` and
  `tool_arguments` (shortcuts, custom tools) have no type, so `null` looks valid; a bulk FAQ review's `action`
  (approve, reject) and non-empty `ids`; a document upload's `file` is not `format: binary`; a model endpoint's
  `base_url` must be https.

Bounded: the coverage phase (Schemathesis' deterministic boundary and wrong-type cases, about 7,000 requests) runs
as the administrator, who passes the role check and so reaches validation on every operation; the agent runs the
fuzzing and stateful phases, where most writes end at the role check. Fuzzing draws FUZZ_EXAMPLES cases per
operation and the stateful phase STATEFUL_EXAMPLES scenarios. On an idle 2-core machine: the agent 54-66 s, the
administrator 184-239 s (the coverage phase about 150 s of it, half its requests wrong JSON types); both test
modules with their two servers about 5 minutes.
`--continue-on-failure` keeps a failing operation going, so a red run costs what a green one does and lists every
failure, not the first.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.demo_api import DemoApi

SEED = 20261127
# Fuzzing cases per operation. Fewer as the agent: most writes end at the role check, and generating bodies that
# match the schema's patterns costs more client time than the server spends answering them.
FUZZ_EXAMPLES = {"admin": 10, "agent": 5}
STATEFUL_EXAMPLES = 20
PHASES = {"admin": "coverage,fuzzing,stateful", "agent": "fuzzing,stateful"}
ROLE_TIME_LIMIT_SECONDS = (
    600  # a hard stop far above the measured time: a hung run fails instead of stalling CI
)
BOUND_PROBABILITY = 0.8

STRICT_CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
)
LENIENT_CHECKS = {
    "negative_data_rejection": "invalid input accepted",
    "positive_data_acceptance": "valid input rejected",
}


@dataclass
class Finding:
    """One check failing on one operation, with how often, on which statuses, and the first example."""

    check: str
    operation: str
    count: int = 0
    statuses: Counter[int | None] = field(default_factory=Counter)
    message: str = ""
    request: str = ""
    response: str = ""

    def line(self, *, detail: bool) -> str:
        statuses = ", ".join(f"{status} x{n}" for status, n in sorted(self.statuses.items(), key=str))
        head = f"{self.check} | {self.operation} | {statuses}"
        if detail:
            return f"{head}\n    {self.message}\n    {self.request}\n    -> {self.response}"
        # The lenient checks' message is boilerplate but for what was invalid; the answer says why it was refused.
        _, _, what = self.message.partition("Invalid component:")
        invalid = f"\n    invalid: {what.strip()[:200]}" if what else ""
        return f"{head}{invalid}\n    e.g. {self.request[:150]} -> {self.response[:200]}"


def _schemathesis() -> str:
    found = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    assert found, "schemathesis is not installed: scripts/setup --dev installs requirements-dev.txt"
    return found


def _toml(value: Any) -> str:
    """TOML for the few value shapes the configuration uses (JSON's strings and numbers are TOML's)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def schemathesis_config(api: DemoApi, role: str, schema: dict[str, Any]) -> str:
    """Dictionaries of live ids bound to the path parameters; each DELETE of `/<id>/` gets the spare object."""
    keep: dict[str, int | str] = {
        "account_id": api.account_id,
        "assistant_id": api.assistant_id,
        "conversation_id": api.conversation_id,
        **api.keep,
        "notification_id": api.notifications[role],
    }
    lines = ["[dictionaries]"]
    lines += [f"keep_{name} = {_toml({'values': [value]})}" for name, value in keep.items()]
    lines += [f"spare_{name} = {_toml({'values': [value]})}" for name, value in api.spare.items()]
    lines += ["", "[parameters]"]
    lines += [
        f'"path.{name}" = {_toml({"dictionary": f"keep_{name}", "probability": BOUND_PROBABILITY})}'
        for name in keep
    ]
    lines += ["", "[phases.stateful.generation]", f"max-examples = {STATEFUL_EXAMPLES}"]
    for path, methods in schema["paths"].items():
        last = path.rstrip("/").rsplit("/", 1)[-1]
        name = last.strip("{}")
        if "delete" in methods and last.startswith("{") and name in api.spare:
            # Always the spare: a made-up id could be the keeper's. One filter (the name is "METHOD path"):
            # separate include-path and include-method filters would match any DELETE, or any method on the path.
            binding = {"dictionary": f"spare_{name}", "probability": 1.0}
            lines += [
                "",
                "[[operations]]",
                f"include-name = {json.dumps('DELETE ' + path)}",
                f"parameters = {_toml({f'path.{name}': binding})}",
            ]
    return "\n".join(lines) + "\n"


def _body(content: Any) -> str:
    """The first characters of a recorded answer's body, on one line."""
    if isinstance(content, dict) and "$base64" in content:
        text = base64.b64decode(content["$base64"]).decode(errors="replace")
    else:
        text = str(content or "")
    return " ".join(text[:600].split())[:300]


def findings_from(ndjson: Path) -> dict[tuple[str, str], Finding]:
    """Every failed check in the run's event stream (the NDJSON report), by (check, operation)."""
    findings: dict[tuple[str, str], Finding] = {}
    with ndjson.open() as events:
        for line in events:
            ((kind, event),) = json.loads(line).items()
            if kind != "ScenarioFinished":
                continue
            recorder = event["recorder"]
            for case_id, checks in recorder.get("checks", {}).items():
                interaction = recorder.get("interactions", {}).get(case_id) or {}
                response = interaction.get("response") or {}
                request = interaction.get("request") or {}
                for check in checks:
                    if check["status"] != "failure":
                        continue
                    failure = check["failure_info"]["failure"]
                    key = (check["name"], failure.get("operation") or recorder.get("label", "?"))
                    finding = findings.setdefault(key, Finding(*key))
                    finding.count += 1
                    finding.statuses[response.get("status_code")] += 1
                    if not finding.message:
                        finding.message = (
                            failure.get("title", "") + ": " + failure.get("message", "")
                        ).replace("\n", " | ")[:400]
                        finding.request = f"{request.get('method', '')} {request.get('uri', '')}"[:300]
                        finding.response = _body(response.get("content"))
    return findings


def report(role: str, findings: dict[tuple[str, str], Finding], seconds: float, summary: str) -> str:
    by_check: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings.values():
        by_check[finding.check].append(finding)
    out = [f"==> Schemathesis as {role}: {seconds:.0f} s, seed {SEED}", summary]
    for check in sorted(by_check, key=lambda c: (c not in STRICT_CHECKS, c)):
        label = LENIENT_CHECKS.get(check, "must not fail" if check in STRICT_CHECKS else "reported")
        out.append(f"-- {check} ({label}): {len(by_check[check])} operation(s)")
        findings_of_check = sorted(by_check[check], key=lambda f: f.operation)
        out += [finding.line(detail=check in STRICT_CHECKS) for finding in findings_of_check]
    return "\n".join(out)


# The agent first: the administrator's run deletes and rewrites objects (its stateful phase follows links from
# lists to the DELETE operations), which would leave the agent's reads with 404s only.
@pytest.mark.parametrize("role", ["agent", "admin"])
def test_schemathesis_finds_no_server_error_and_no_undocumented_answer(
    demo_api: DemoApi, role: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = httpx.get(demo_api.schema_url, params={"format": "json"}, timeout=30).raise_for_status().json()
    config = tmp_path / "schemathesis.toml"
    config.write_text(schemathesis_config(demo_api, role, schema))
    ndjson = tmp_path / "events.ndjson"
    command = [
        _schemathesis(),
        "--config-file",
        str(config),
        "run",
        demo_api.schema_url,
        "--checks",
        "all",
        "--phases",
        PHASES[role],
        "--seed",
        str(SEED),
        "--max-examples",
        str(FUZZ_EXAMPLES[role]),
        "--continue-on-failure",
        # No example database: a failure found in an earlier run would be replayed first and change the run.
        "--generation-database",
        "none",
        # Two workers for the server's two processes: the machine's two cores both work.
        "--workers",
        "2",
        "--header",
        f"Authorization: Token {demo_api.tokens[role]}",
        "--report",
        "ndjson,junit",
        "--report-ndjson-path",
        str(ndjson),
        "--report-junit-path",
        str(tmp_path / "junit.xml"),
        "--no-color",
    ]
    started = time.monotonic()
    # cwd: Schemathesis reads a schemathesis.toml from the working directory upwards; none but ours applies.
    run = subprocess.run(
        command,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        timeout=ROLE_TIME_LIMIT_SECONDS,
    )
    seconds = time.monotonic() - started
    (tmp_path / "schemathesis.log").write_text(run.stdout + run.stderr)
    # 0: nothing failed; 1: some check failed (judged below); anything else: it could not run.
    assert run.returncode in (0, 1), run.stdout[-3000:] + run.stderr[-3000:]
    assert ndjson.exists(), run.stdout[-3000:]
    summary = (
        run.stdout[run.stdout.rfind("=== SUMMARY") :] if "=== SUMMARY" in run.stdout else run.stdout[-2000:]
    )
    findings = findings_from(ndjson)
    text = report(role, findings, seconds, summary)
    with capsys.disabled():
        print("\n" + text, flush=True)
    strict = [finding for (check, _), finding in sorted(findings.items()) if check in STRICT_CHECKS]
    assert not strict, f"{len(strict)} (check, operation) failure(s) as {role}:\n" + "\n".join(
        finding.line(detail=True) for finding in strict
    )
