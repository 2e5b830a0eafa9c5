"""IRs of the pinned revisions, built once per test session; a local HTTP server for downloads;
the release-day schemas (test data, checked by sha256 before use)."""

from __future__ import annotations

import hashlib
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcpbind.codegen.ir import RevisionIR, build_ir
from mcpbind.codegen.load import load_revision
from mcpbind.codegen.pins import load_pins

# Each revision's schema.json as published on its release day (the spec repository's commit that
# released it; see schema/README.md): they differ from the pinned bytes, which were edited later.
RELEASE_DAY = Path(__file__).resolve().parent / "data" / "schema-release-day"
RELEASE_DAY_SHA256 = {
    "2024-11-05": "bc8e284ddcd14b13707d74335afca62880cdb1ef752414845b17f5ec795ccb32",
    "2025-03-26": "dd1619bf96fcd8c50fe46f0dd05b4b9bb9356010040ae985fa595fee226ff4ed",
    "2025-06-18": "05020a692319467847cdb1794b1306567f52860353b5ff2f2bc2b0140819305b",
    "2025-11-25": "1ffe4c5577974012f5fa02af14ea88df4b7146679df1abaaad497c8d9230ca8a",
    "2026-07-28": "9281c4890630e2d1e61792fa23b4084c4ea360cd58519610cd050545ab7b8708",
}


@pytest.fixture(scope="session")
def release_day() -> Path:
    """The folder of ``<rev>/schema.json`` as released, each file's bytes checked first."""
    for revision, digest in RELEASE_DAY_SHA256.items():
        data = (RELEASE_DAY / revision / "schema.json").read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, f"release-day {revision} changed"
    return RELEASE_DAY


@pytest.fixture(scope="session")
def irs() -> dict[str, RevisionIR]:
    return {rev: build_ir(load_revision(rev)) for rev in load_pins()}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A real HTTP server on 127.0.0.1 serving ``tmp_path``: the download path, without the internet."""
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", tmp_path
    finally:
        server.shutdown()
        server.server_close()
