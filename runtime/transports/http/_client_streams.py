"""Reading the Streamable HTTP client's SSE responses: a POST's stream, its resumption with
``GET`` + ``Last-Event-ID`` after the server's ``retry`` delay, and the standalone GET stream."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio
import httpx
from httpx_sse import EventSource
from mcpbind.runtime.core import jsonrpc as rpc

from ._client_state import ClientState
from ._stream_state import StreamState
from .common import LAST_EVENT_ID, SSE

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = ["DRAIN_TIMEOUT", "StreamReader"]

logger = logging.getLogger("mcpbind.runtime.http")

#: How long a stream may linger after its response before it is closed instead of drained.
DRAIN_TIMEOUT = 0.5


class StreamReader(ClientState):
    """The client's SSE side: feeds every event's message to the session."""

    async def _read_events(
        self, response: httpx.Response, state: StreamState, answer_to: int | str | None
    ) -> bool:
        """Feed one SSE response's messages; True once the response to ``answer_to`` came.

        After that response the stream is read to its end (the server ends it right away), so
        its connection goes back to the pool; one that lingers is closed instead.
        """
        answered = False
        events = EventSource(response).aiter_sse()
        with anyio.CancelScope() as drain:
            async for event in events:
                state.seen(event)
                if not event.data or event.event not in ("message", ""):
                    continue
                message: JsonValue | rpc.Malformed = rpc.decode(event.data)
                if isinstance(message, rpc.Malformed):
                    logger.warning("dropped an SSE event that is not JSON: %s", message.reason)
                    continue
                await self._feed(message)
                if (
                    not answered
                    and answer_to is not None
                    and type(message) is dict
                    and "method" not in message
                    and message.get("id") == answer_to
                ):
                    answered = True
                    drain.deadline = anyio.current_time() + DRAIN_TIMEOUT
        return answered

    async def _read_post_stream(
        self, response: httpx.Response, request_id: int | str | None
    ) -> None:
        state = StreamState()
        try:
            if await self._read_events(response, state, request_id):
                return
        except (httpx.HTTPError, anyio.EndOfStream) as exc:
            logger.info("the stream of request %r dropped (%r)", request_id, exc)
        await response.aclose()
        if request_id is None:
            return
        if state.last_event_id is None or request_id in self.modern:
            await self._fail(
                request_id,
                "the server closed the stream before answering, and it cannot be resumed",
            )
            return
        await self._resume(state, request_id)

    async def _resume(self, state: StreamState, request_id: int | str) -> None:
        """GET with ``Last-Event-ID`` until the response arrives or reconnecting keeps failing."""
        failures = 0
        while failures <= self.max_reconnects:
            await anyio.sleep(state.delay())
            headers = self.headers_for(SSE)
            headers[LAST_EVENT_ID] = state.last_event_id or ""
            progressed = state.events
            try:
                async with self.http.stream("GET", self.url, headers=headers) as response:
                    if response.status_code == 404 and self.session_id is not None:
                        await self._fail(request_id, "the server ended the session (HTTP 404)")
                        self._end("the server ended the session (HTTP 404); start a new one")
                        return
                    if response.status_code != 200:
                        await self._fail(
                            request_id, f"resuming the stream failed: HTTP {response.status_code}"
                        )
                        return
                    if await self._read_events(response, state, request_id):
                        return
            except httpx.HTTPError as exc:
                logger.info("resuming the stream of request %r failed (%r)", request_id, exc)
            failures = 0 if state.events > progressed else failures + 1
        await self._fail(
            request_id, f"the stream dropped and {self.max_reconnects} attempts to resume it failed"
        )

    async def _get_stream(self, opened: anyio.Event) -> None:
        """The standalone stream: reconnect (resuming) whenever it ends, until told to stop.
        Started once the first attempt has its status (or failed)."""
        state = StreamState()
        failures = 0
        while failures <= self.max_reconnects:
            headers = self.headers_for(SSE)
            if state.last_event_id:
                headers[LAST_EVENT_ID] = state.last_event_id
            progressed = state.events
            try:
                async with self.http.stream("GET", self.url, headers=headers) as response:
                    opened.set()
                    if response.status_code == 405:
                        logger.debug("the server offers no GET stream")
                        return
                    if response.status_code == 404:
                        return
                    if response.status_code == 400 and state.last_event_id:
                        state.last_event_id = None
                    elif response.status_code == 200:
                        await self._read_events(response, state, None)
            except httpx.HTTPError as exc:
                logger.debug("the GET stream dropped (%r)", exc)
            opened.set()
            failures = 0 if state.events > progressed else failures + 1
            await anyio.sleep(
                state.delay() * (1 if failures <= 1 else min(2 ** (failures - 1), 30))
            )
        logger.warning("gave up on the GET stream after %d failed attempts", failures)
