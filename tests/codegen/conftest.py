"""IRs of the pinned revisions, built once per test session; a local HTTP server for downloads."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcpbind.codegen.ir import RevisionIR, build_ir
from mcpbind.codegen.load import load_revision
from mcpbind.codegen.pins import load_pins


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
