"""The app every worker of the cluster tests runs: the conformance fixture server on the
worker's ``SharedState``, plus ``GET /_stats`` answering that worker's own counters (and id), so
tests see where requests went by asking each worker on its own port.

Started as ``cluster_app:build`` with ``--app-dir`` this folder; the conformance folder is put
on ``sys.path`` here because ``fixture_server`` imports ``fixture_modern`` by name.

Every worker seals the 2026 ``requestState`` with the same key, as any deployment of several
workers must (a retry landing on another worker is refused otherwise: the MRTR scenarios fail
exactly so): the runtime's ``RequestStateKeeper`` takes it from the ``MCPBIND_STATE_KEY`` the
launcher shares among its workers by itself; the fixture's hand-written states are signed with
the same key here (``shared_state_key``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from mcpbind.runtime import shared_state_key
from starlette.types import ASGIApp, Receive, Scope, Send

CONFORMANCE = Path(__file__).resolve().parents[3] / "conformance"
if str(CONFORMANCE) not in sys.path:
    sys.path.insert(0, str(CONFORMANCE))

import fixture_modern  # noqa: E402
from fixture_server import build_app  # noqa: E402

#: The secret ``serve`` gives every worker of one cluster (``MCPBIND_STATE_KEY``).
KEY = shared_state_key()
assert KEY is not None, "cluster_app runs under the launcher, which sets MCPBIND_STATE_KEY"
fixture_modern._KEY = KEY

STATS_PATH = "/_stats"


def build(shared: Any) -> ASGIApp:
    """The fixture's ``StreamableHTTPServer`` on ``shared``, with the ``/_stats`` route."""
    server = build_app(shared=shared)
    worker = os.environ.get("MCPBIND_WORKER_ID", "")

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == STATS_PATH:
            body = json.dumps({"worker": worker, "stats": dict(server.stats)}).encode()
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await server(scope, receive, send)

    app.close_subscriptions = server.close_subscriptions  # type: ignore[attr-defined]
    return app
