"""The official conformance suite through haproxy and 3 workers sharing Redis gives the same
counts as against one process.

Both server requirement sets (2025-11-25: sessions, sampling and elicitation answered to other
workers, resumption; 2026-07-28: stateless requests, listen streams) run against one fixture
process and against the cluster serving the same fixture (``cluster_app``); every scenario must
have the same passed and failed counts in both (the unscored ones included: the 2026 tasks
extension is not there yet, and fails alike in both), with no scored check failed.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from clusterkit import Cluster, running_cluster
from rediskit import RedisServer
from suitekit import RESULTS, Suite, Summary, parse_summary

pytestmark = [pytest.mark.interop, pytest.mark.timeout(120)]

FIXTURE = Path(__file__).resolve().parents[3] / "conformance" / "fixture_server.py"


@pytest.fixture(scope="module")
def cluster(redis: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("cluster"), redis.url) as running:
        yield running


@pytest.fixture(scope="module")
def single_url() -> Iterator[str]:
    """The conformance fixture as ONE process, as ``tests/conformance`` runs it."""
    process = subprocess.Popen(
        [sys.executable, str(FIXTURE), "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    try:
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def run_suite(suite: Suite, url: str, requirements: str, out: Path) -> tuple[Summary, str]:
    run = subprocess.run(
        [*suite.command, "server", "--url", url, "--requirements", requirements, "-o", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    output = run.stdout + run.stderr
    return parse_summary(output), output


@pytest.mark.parametrize("requirements", ["2025-11-25", "2026-07-28"])
def test_the_cluster_scores_as_one_process(
    conformance_suite: Suite,
    cluster: Cluster,
    single_url: str,
    requirements: str,
    tmp_path: Path,
) -> None:
    alone, _ = run_suite(conformance_suite, single_url, requirements, tmp_path / "single")
    balanced, output = run_suite(conformance_suite, cluster.url, requirements, tmp_path / "lb")
    passed, failed = balanced.totals()
    extra_passed, extra_failed = balanced.totals(scored=False)
    RESULTS[f"server --requirements {requirements} through haproxy, 3 workers + Redis"] = (
        f"{passed} passed, {failed} failed; unscored: {extra_passed} passed, {extra_failed} failed"
    )
    assert len(alone.scenarios) >= 30, "the suite ran too few scenarios against one process"
    names = sorted(set(alone.scenarios) | set(balanced.scenarios))
    differing = {
        name: (alone.scenarios.get(name), balanced.scenarios.get(name))
        for name in names
        if alone.scenarios.get(name) != balanced.scenarios.get(name)
    }
    assert differing == {}, f"(one process, cluster) per scenario: {differing}\n{output[-4000:]}"
    assert failed == 0 and passed > 0, f"failing: {balanced.failing()}\n{output[-4000:]}"
    assert all(worker.stats()["served"] > 0 for worker in cluster.workers)
