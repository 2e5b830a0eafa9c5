"""Every client-to-server method of every pinned revision, fuzzed against real servers.

For each request and notification method of each revision's ``schema.json``, messages drawn
from the schema and mutated (``fuzzkit.py``) go to ``app_server.py`` over stdio (one process per
revision) and to ``conformance_app.py`` over Streamable HTTP (one process, a session per
handshake-era revision, and the stateless era); raw frames go to both. Each must get one
well-formed JSON-RPC answer per request and none per notification, no 5xx, no traceback text,
and the session must answer a ping (``server/discover`` in the stateless era) after.

A few examples per method here (``MCPBIND_FUZZ_EXAMPLES``, default 3, derandomized);
``bench/fuzz.py`` runs many more.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from fuzz_http import HttpPeer
from fuzz_stdio import StdioPeer
from fuzz_wire import STATELESS
from fuzzkit import CASES, messages, raw_frames, record
from generated_helpers import REVISIONS, hypothesis_jsonschema_shims
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

EXAMPLES = int(os.environ.get("MCPBIND_FUZZ_EXAMPLES", "3"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("MCPBIND_FUZZ_RANDOM") is None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,
    ],
)
#: The revisions served over HTTP: one handshake-era session each, and the stateless era.
HTTP_REVISIONS = ("2024-11-05", "2025-11-25", STATELESS)
HTTP_CASES = [case for case in CASES if case[0] in HTTP_REVISIONS]
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module", autouse=True)
def _shims() -> Iterator[None]:
    with hypothesis_jsonschema_shims():
        yield


@pytest.fixture(scope="module")
def stdio_peers() -> Iterator[dict[str, StdioPeer]]:
    peers: dict[str, StdioPeer] = {}
    try:
        yield peers
    finally:
        for peer in peers.values():
            peer.close()


def stdio_peer(peers: dict[str, StdioPeer], revision: str) -> StdioPeer:
    peer = peers.get(revision)
    if peer is None or peer.process.poll() is not None:
        peer = peers[revision] = StdioPeer(revision)
    return peer


@pytest.fixture(scope="module")
def http_peer() -> Iterator[HttpPeer]:
    peer = HttpPeer()
    try:
        yield peer
    finally:
        peer.close()


def test_every_method_of_every_revision_is_fuzzed() -> None:
    assert {revision for revision, *_ in CASES} == set(REVISIONS)
    methods = {method for _, _, method, _ in CASES}
    assert {"tools/call", "resources/read", "prompts/get", "notifications/cancelled"} <= methods
    assert len(CASES) > 80


@pytest.mark.parametrize(
    ("revision", "name", "method", "is_request"), CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES]
)
@FUZZ
@given(data=st.data())
def test_stdio_answers_every_mutated_message(
    stdio_peers: dict[str, StdioPeer],
    revision: str,
    name: str,
    method: str,
    is_request: bool,
    data: st.DataObject,
) -> None:
    message: dict[str, Any] = data.draw(messages(revision, name, is_request), label="message")
    stdio_peer(stdio_peers, revision).check_message(message)
    record("stdio", revision, method)


@pytest.mark.parametrize(
    ("revision", "name", "method", "is_request"),
    HTTP_CASES,
    ids=[f"{c[0]}-{c[2]}" for c in HTTP_CASES],
)
@FUZZ
@given(data=st.data())
def test_http_answers_every_mutated_message(
    http_peer: HttpPeer,
    revision: str,
    name: str,
    method: str,
    is_request: bool,
    data: st.DataObject,
) -> None:
    message: dict[str, Any] = data.draw(messages(revision, name, is_request), label="message")
    http_peer.check_message(revision, message)
    record("http", revision, method)


BATCH_REVISIONS = ("2024-11-05", "2025-03-26")


@pytest.mark.parametrize("revision", BATCH_REVISIONS)
@settings(FUZZ, max_examples=EXAMPLES * 10)
@given(data=st.data())
def test_stdio_answers_every_mutated_batch(
    stdio_peers: dict[str, StdioPeer], revision: str, data: st.DataObject
) -> None:
    cases = [case for case in CASES if case[0] == revision and case[2] != "initialize"]
    chosen = data.draw(st.lists(st.sampled_from(cases), min_size=1, max_size=4), label="methods")
    batch = []
    for n, (_, name, method, is_request) in enumerate(chosen):
        message = data.draw(messages(revision, name, is_request), label=method)
        if is_request:
            message["id"] = f"batch-{n}"  # unique, so that each answer is told apart
        batch.append(message)
    stdio_peer(stdio_peers, revision).check_batch(batch)
    record("stdio", revision, "(batch)")


@pytest.mark.parametrize("revision", ["2025-03-26", STATELESS])
@settings(FUZZ, max_examples=EXAMPLES * 10)
@given(frame=raw_frames)
def test_stdio_survives_raw_frames(
    stdio_peers: dict[str, StdioPeer], revision: str, frame: bytes
) -> None:
    stdio_peer(stdio_peers, revision).check_frame(frame)
    record("stdio", revision, "(raw frame)")


@pytest.mark.parametrize("revision", HTTP_REVISIONS)
@settings(FUZZ, max_examples=EXAMPLES * 10)
@given(frame=raw_frames)
def test_http_survives_raw_frames(http_peer: HttpPeer, revision: str, frame: bytes) -> None:
    http_peer.check_frame(revision, frame)
    record("http", revision, "(raw frame)")


LONE_SURROGATE_NOTE = (
    b'{"jsonrpc":"2.0","method":"notifications/progress",'
    b'"params":{"progressToken":"\\ud800","progress":1}}'
)


def test_a_lone_surrogate_is_a_parse_error_even_in_a_notification(
    stdio_peers: dict[str, StdioPeer], http_peer: HttpPeer
) -> None:
    peer = stdio_peer(stdio_peers, "2025-11-25")
    peer.write(LONE_SURROGATE_NOTE)
    (answer,) = [m for m in peer.until({None}) if type(m) is dict and "method" not in m]
    assert answer["id"] is None and answer["error"]["code"] == -32700, answer
    assert "surrogate" in answer["error"]["data"]
    peer.probe()
    response = http_peer.post("2025-11-25", LONE_SURROGATE_NOTE)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700
    http_peer.probe("2025-11-25")
