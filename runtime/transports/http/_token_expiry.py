"""A response served under an access token ends when the token does.

A GET event stream, or a POST answered with one, may stay open for hours; the token checked
when it opened expires long before, or is revoked. At the token's ``expires_at``, or when the
protection's periodic re-check (``AUTH_RECHECK_KEY``) finds it no longer valid, the response is
ended the way HTTP allows at that point: not started, a 401 ``invalid_token`` (the client refreshes and
asks again); an event stream, one last event carrying a JSON-RPC error that says why, then the
end of the body (the client reconnects with a fresh token; a GET stream resumes from its last
event id where the server keeps events); any other body, its end.

The headers the protection asked for (``AUTH_HEADERS_KEY``) are added to the response here too,
where every admitted request's response passes.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import anyio
from mcpbind.runtime.core import jsonrpc as rpc
from mcpbind.runtime.core.access_token import AccessToken
from starlette.types import Message, Scope, Send

from .asgi import CONNECTION_ERROR, error
from .common import AUTH_HEADERS_KEY, AUTH_RECHECK_KEY, AUTH_SCOPE_KEY, SSE, encode_event

__all__ = ["EXPIRED", "REVOKED", "serve_until_expiry"]

logger = logging.getLogger(__name__)

#: The message of the error that ends a response whose token expired.
EXPIRED: Final = "Unauthorized: the access token expired; reconnect with a fresh one"
#: The message of the error that ends a response whose token a re-check refused.
REVOKED: Final = "Unauthorized: the access token is no longer valid; reconnect with a fresh one"


async def serve_until_expiry(
    scope: Scope, send: Send, serve: Callable[[Send], Awaitable[None]]
) -> None:
    """Run ``serve`` (the rest of the request, writing through the given ``send``) until it
    is done or the request's access token expires or fails a re-check, then end the response
    as it allows."""
    extra: Any = scope.get(AUTH_HEADERS_KEY)
    if extra:
        send = _with_headers(send, list(extra))
    token = scope.get(AUTH_SCOPE_KEY)
    expires = token.expires_at if isinstance(token, AccessToken) else None
    recheck: Any = scope.get(AUTH_RECHECK_KEY)
    if expires is None and recheck is None:
        await serve(send)
        return
    started = streaming = finished = False

    async def watched(message: Message) -> None:
        nonlocal started, streaming, finished
        if message["type"] == "http.response.start":
            started = True
            streaming = any(
                name == b"content-type" and value.startswith(SSE.encode())
                for name, value in message.get("headers", ())
            )
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            finished = True
        await send(message)

    reason: str | None = None
    if recheck is None:
        # Only the expiry: a deadline, without a task of its own.
        assert expires is not None
        with anyio.move_on_after(max(0.0, expires - time.time())) as deadline:
            await serve(watched)
        if deadline.cancelled_caught:
            reason = EXPIRED
    else:
        interval, check = recheck
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                nonlocal reason
                end = math.inf if expires is None else float(expires)
                while reason is None:
                    await anyio.sleep(max(0.0, min(end - time.time(), interval)))
                    if time.time() >= end:
                        reason = EXPIRED
                    elif not await check():
                        reason = REVOKED
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            await serve(watched)
            tg.cancel_scope.cancel()
    if reason is None or finished:
        return
    logger.info("ended a response: %s", reason)
    if not started:
        await error(send, 401, CONNECTION_ERROR, reason, **{"www-authenticate": _CHALLENGE})
        return
    body = b""
    if streaming:
        body = encode_event(rpc.error_response(None, CONNECTION_ERROR, reason))
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _with_headers(send: Send, extra: list[tuple[bytes, bytes]]) -> Send:
    """``send``, adding ``extra`` to the response's headers."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *extra]}
        await send(message)

    return sending


_CHALLENGE: Final = (
    'Bearer error="invalid_token", error_description="the access token is not valid"'
)
