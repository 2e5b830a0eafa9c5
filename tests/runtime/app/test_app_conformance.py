"""The official conformance suite against a server written with the app layer
(``conformance_app.py``, ~190 lines): every tools, resources, prompts and utilities scenario
of both requirement sets passes. The scenarios that need diagnostic tools this app does not
write (SEP-1034/1330 elicitation schemas, a hand-written JSON Schema 2020-12 input schema,
the input-required and tasks fixtures) are the low-level fixture's, in tests/conformance."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from suitekit import Suite, cache_dir, install_suite, parse_summary

pytestmark = [pytest.mark.interop, pytest.mark.timeout(900)]

APP = Path(__file__).with_name("conformance_app.py")

COMMON = [
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
]
SCENARIOS = {
    "2025-11-25": [
        *COMMON,
        "server-initialize",
        "logging-set-level",
        "ping",
        "tools-call-with-logging",
        "tools-call-sampling",
        "tools-call-elicitation",
        "resources-subscribe",
        "resources-unsubscribe",
        "server-session-lifecycle",
    ],
    "2026-07-28": [*COMMON, "caching", "sep-2164-resource-not-found", "http-header-validation"],
}


@pytest.fixture(scope="module")
def suite() -> Suite:
    return install_suite(cache_dir())


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, str(APP), "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        process.kill()
        pytest.fail(f"the app did not start (printed {url!r})")
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize("requirements", sorted(SCENARIOS))
def test_the_suite_passes_the_apps_scenarios(
    suite: Suite, app_url: str, requirements: str, tmp_path: Path
) -> None:
    run = subprocess.run(
        [*suite.command, "server", "--url", app_url, "--requirements", requirements,
         "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    summary = parse_summary(run.stdout + run.stderr)
    results = {name: summary.scenarios.get(name) for name in SCENARIOS[requirements]}
    missing = [name for name, result in results.items() if result is None]
    failing = {name: r for name, r in results.items() if r is not None and (r[1] or not r[0])}
    assert not missing and not failing, (missing, failing, run.stdout[-3000:])
