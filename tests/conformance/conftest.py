"""Fixtures of the conformance tests: the suite, installed once; and a summary of the counts.

The counts also go into each test's assertion message and ``record_property``; the terminal
summary repeats them because CI runs pytest without ``-s``.
"""

from __future__ import annotations

import pytest
from suitekit import RESULTS, Suite, cache_dir, install_suite


@pytest.fixture(scope="session")
def conformance_suite() -> Suite:
    return install_suite(cache_dir())


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if RESULTS:
        terminalreporter.section("MCP conformance")
        for key, line in RESULTS.items():
            terminalreporter.write_line(f"{key}: {line}")
