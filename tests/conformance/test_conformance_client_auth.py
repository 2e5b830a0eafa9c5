"""The official suite's OAuth client scenarios against ``fixture_client.py`` (``fixture_auth``).

One suite run per set, its scenarios in parallel: ``--requirements`` of each revision (every
``auth/*`` scenario it scores must pass with no failed check; its other client scenarios are
``test_conformance*.py``'s, run there one at a time), the 2025-03-26 back-compatibility scenarios (no protected
resource metadata; metadata at the root, or the default endpoints), and the extensions the
official Python SDK passes too: client credentials (secret and ``private_key_jwt``), enterprise-
managed authorization, workload identity (JWT bearer), and DPoP (SEP-1932, with and without
server nonces; the official SDK fails those two), whose every scored check must be a SUCCESS.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from suitekit import FIXTURE_CLIENT, RESULTS, Suite, strip_ansi

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]

#: The extension scenarios that must pass.
EXTENSIONS = [
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/enterprise-managed-authorization",
    "auth/wif-jwt-bearer",
    "auth/dpop",
    "auth/dpop-nonce",
]
#: The SEP-1932 checks each DPoP scenario scores.
DPOP_CHECKS = {
    "dpop": {
        "sep-1932-client-token-request-proof",
        "sep-1932-client-dpop-auth-scheme",
        "sep-1932-client-fresh-proof",
    },
    "dpop-nonce": {
        "sep-1932-client-token-request-proof",
        "sep-1932-client-dpop-auth-scheme",
        "sep-1932-client-fresh-proof",
        "sep-1932-client-as-nonce",
        "sep-1932-client-rs-nonce",
    },
}
BACKCOMPAT = [
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
]


def required_auth(suite: Suite, requirements: str) -> list[str]:
    """The scored ``auth/*`` client scenarios of ``--requirements``."""
    listing = subprocess.run(
        [*suite.command, "list", "--requirements", requirements],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    _, _, client_part = listing.stdout.partition("Client scenarios")
    scored, _, _ = client_part.partition("Run and reported")
    return re.findall(r"^\s+- (auth/\S+)", scored, re.MULTILINE)


#: A scenario's line in the ``=== SUITE SUMMARY ===`` of a parallel run.
SCENARIO_LINE = re.compile(r"^[✓✗]\s+(\S+):\s+(\d+) passed,\s+(\d+) failed", re.MULTILINE)


def run_suite(suite: Suite, out: Path, *selection: str) -> tuple[dict[str, tuple[int, int]], str]:
    """One parallel suite run of the fixture client over ``selection``."""
    run = subprocess.run(
        [*suite.command, "client", "--command", f"{sys.executable} {FIXTURE_CLIENT}",
         *selection, "--timeout", "60000", "-o", str(out)],
        capture_output=True, text=True, timeout=540, check=False,
    )  # fmt: skip
    output = strip_ansi(run.stdout + run.stderr)
    _, _, tail = output.partition("=== SUITE SUMMARY ===")
    counts = {name: (int(p), int(f)) for name, p, f in SCENARIO_LINE.findall(tail)}
    return counts, output


def check(key: str, summary: dict[str, tuple[int, int]], wanted: list[str], output: str) -> None:
    """Every ``wanted`` scenario ran, with checks passed and none failed."""
    ran = {name: summary.get(name) for name in wanted}
    bad = {
        name: counts for name, counts in ran.items() if counts is None or counts[1] or not counts[0]
    }
    passed = sum(counts[0] for counts in ran.values() if counts)
    failed = sum(counts[1] for counts in ran.values() if counts)
    RESULTS[key] = (
        f"{len(wanted) - len(bad)} of {len(wanted)} scenarios passed; checks {passed} passed, "
        f"{failed} failed"
    )
    assert not bad, f"{key}: {bad}\n{output[-8000:]}"


@pytest.mark.parametrize("requirements", ["2025-11-25", "2026-07-28"])
def test_auth_scenarios(conformance_suite: Suite, requirements: str, tmp_path: Path) -> None:
    wanted = required_auth(conformance_suite, requirements)
    assert len(wanted) >= 14, wanted
    summary, output = run_suite(conformance_suite, tmp_path, "--requirements", requirements)
    check(f"client auth/* --requirements {requirements}", summary, wanted, output)


def test_auth_backcompat(conformance_suite: Suite, tmp_path: Path) -> None:
    summary, output = run_suite(conformance_suite, tmp_path, "--suite", "backcompat")
    check("client auth 2025-03-26 back-compatibility", summary, BACKCOMPAT, output)


def test_auth_extensions(conformance_suite: Suite, tmp_path: Path) -> None:
    summary, output = run_suite(conformance_suite, tmp_path, "--suite", "extensions")
    check("client auth extensions", summary, EXTENSIONS, output)
    for name, wanted in DPOP_CHECKS.items():
        (checks_file,) = (tmp_path / "auth").glob(f"{name}-2*/checks.json")
        checks = json.loads(checks_file.read_text(encoding="utf-8"))
        scored = {c["id"]: c["status"] for c in checks if c["status"] != "INFO"}
        assert set(scored.values()) == {"SUCCESS"}, (name, scored)
        assert wanted <= set(scored), (name, sorted(scored))
