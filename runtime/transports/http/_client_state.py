"""The Streamable HTTP client's state and plumbing: session id, negotiated version, the
requests in flight, and how answers (or failures) reach the session.

``client.py`` builds on it: ``_client_streams.StreamReader`` reads SSE responses (and resumes
them), ``client._StreamableClient`` POSTs what the session sends.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio
import httpx
from anyio.abc import TaskGroup
from mcpbind.runtime.core import jsonrpc as rpc
from mcpbind.runtime.core.errors import HTTP_STATUS
from mcpbind.runtime.core.logsafe import printable
from mcpbind.runtime.core.request_headers import REQUEST_HEADERS, HeaderHook
from mcpbind.runtime.core.transport import Envelope

from ._fastpost import FastPoster, RequestTasks
from ._signals import Inbox
from .common import PROTOCOL_VERSION, SESSION_ID

if TYPE_CHECKING:
    import asyncio  # annotations only: the tasks come from the fast path seam

    from mcpbind.runtime.core.jsonvalue import JsonValue

    from .legacy_sse import LegacySSEChannel

__all__ = ["TRANSPORT_ERROR", "ClientState", "HttpTransportError", "error_body", "request_id_of"]

logger = logging.getLogger("mcpbind.runtime.http")

#: The code of errors this transport makes up for a request the server never answered.
TRANSPORT_ERROR = -32000


class HttpTransportError(Exception):
    """The HTTP exchange failed in a way no JSON-RPC response describes."""


def error_body(body: bytes) -> dict[str, Any] | None:
    """The ``error`` member of ``body`` if it is a JSON-RPC error response, else None."""
    parsed: JsonValue | rpc.Malformed = rpc.decode(body)
    error: JsonValue = parsed.get("error") if type(parsed) is dict else None
    if type(error) is dict and type(error.get("code")) is int and type(error.get("message")) is str:
        return error
    return None


def request_id_of(message: JsonValue) -> int | str | None:
    if type(message) is dict and "method" in message and rpc.is_request_id(message.get("id")):
        return message["id"]  # type: ignore[no-any-return]
    return None


class ClientState:
    """The state of one client connection: session id, negotiated version, open streams."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        url: str,
        headers: Mapping[str, str],
        incoming: Inbox,
        *,
        max_reconnects: int,
        fallback_to_sse: bool,
        sse_read_timeout: float,
    ) -> None:
        self.http = http
        self.post_clients: list[httpx.AsyncClient] = [http]
        self._next_post = 0
        self.url = url
        self.headers = dict(headers)
        self.incoming = incoming
        self.max_reconnects = max_reconnects
        self.fallback_to_sse = fallback_to_sse
        self.sse_read_timeout = sse_read_timeout
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.close_reason: str | None = None
        self.legacy: LegacySSEChannel | None = None
        #: What reads each request's answer: cancelled when the session gives up on it.
        self.readers: dict[int | str, anyio.CancelScope | asyncio.Task[None]] = {}
        self.tasks = RequestTasks()
        self.get_started = False
        self.hook = HeaderHook()
        #: The ``Connection.extra`` handed to the session (which puts its deadline hold there).
        self.extra: dict[str, Any] = {REQUEST_HEADERS: self.hook}
        #: Stateless-era requests in flight: cancelled by closing their stream, never resumed.
        self.modern: set[int | str] = set()
        self._initialize_id: int | str | None = None
        self._tg: TaskGroup | None = None
        #: Messages waiting in (or being sent from) ``write_loop``'s queue, which a request must
        #: not overtake.
        self.queued = 0
        #: The small pool the POSTs take when nothing needs httpx (see ``_fastpost``).
        self.poster: FastPoster | None = None

    # -- plumbing ---------------------------------------------------------------------------

    def headers_for(self, accept: str) -> dict[str, str]:
        headers = {**self.headers, "accept": accept}
        if self.session_id is not None:
            headers[SESSION_ID] = self.session_id
        if self.protocol_version is not None:
            headers[PROTOCOL_VERSION] = self.protocol_version
        return headers

    async def _feed(self, message: JsonValue) -> None:
        """Hand a parsed message to the session, learning the version from the handshake."""
        if (
            self._initialize_id is not None
            and type(message) is dict
            and message.get("id") == self._initialize_id
            and "method" not in message
        ):
            result: JsonValue = message.get("result")
            if type(result) is dict and type(result.get("protocolVersion")) is str:
                self.protocol_version = result["protocolVersion"]
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await self.incoming.put(Envelope(message))

    async def _answer_error(self, request_id: int | str, error: dict[str, Any]) -> None:
        """The server's JSON-RPC error for ``request_id``, as the session's answer to it (the
        body's own id may be null: the server could not always tell which request it was)."""
        data = error.get("data")
        await self._feed(rpc.error_response(request_id, error["code"], error["message"], data))

    async def _fail(
        self, request_id: int | str | None, reason: str, status: int | None = None
    ) -> None:
        """Answer a request the server will never answer, so its caller does not hang.

        ``status``: the HTTP status that refused it, kept in the error's data (``HTTP_STATUS``)
        so a caller can tell a refusal from a failed exchange.
        """
        if request_id is None:
            logger.warning("%s", printable(reason))
            return
        data = {HTTP_STATUS: status}
        await self._feed(rpc.error_response(request_id, TRANSPORT_ERROR, reason, data))

    def _end(self, reason: str) -> None:
        """The server ended the session: fail everything by ending the connection."""
        self.close_reason = reason
        self.incoming.end()
