"""A response served under an access token ends when the token does.

A GET event stream, or a POST answered with one, may stay open for hours; the token checked
when it opened expires long before. At the token's ``expires_at`` the response is ended the
way HTTP allows at that point: not started, a 401 ``invalid_token`` (the client refreshes and
asks again); an event stream, one last event carrying a JSON-RPC error that says why, then the
end of the body (the client reconnects with a fresh token; a GET stream resumes from its last
event id where the server keeps events); any other body, its end.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Final

import anyio
from mcpbind.runtime.core import jsonrpc as rpc
from mcpbind.runtime.core.access_token import AccessToken
from starlette.types import Message, Scope, Send

from .asgi import CONNECTION_ERROR, error
from .common import AUTH_SCOPE_KEY, SSE, encode_event

__all__ = ["EXPIRED", "serve_until_expiry"]

logger = logging.getLogger(__name__)

#: The message of the error that ends a response whose token expired.
EXPIRED: Final = "Unauthorized: the access token expired; reconnect with a fresh one"


async def serve_until_expiry(
    scope: Scope, send: Send, serve: Callable[[Send], Awaitable[None]]
) -> None:
    """Run ``serve`` (the rest of the request, writing through the given ``send``) until it
    is done or the request's access token expires, then end the response as it allows."""
    token = scope.get(AUTH_SCOPE_KEY)
    if not isinstance(token, AccessToken) or token.expires_at is None:
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

    with anyio.move_on_after(max(0.0, token.expires_at - time.time())) as deadline:
        await serve(watched)
    if not deadline.cancelled_caught or finished:
        return
    logger.info("ended a response: its access token expired")
    if not started:
        await error(send, 401, CONNECTION_ERROR, EXPIRED, **{"www-authenticate": _CHALLENGE})
        return
    body = b""
    if streaming:
        body = encode_event(rpc.error_response(None, CONNECTION_ERROR, EXPIRED))
    await send({"type": "http.response.body", "body": body, "more_body": False})


_CHALLENGE: Final = 'Bearer error="invalid_token", error_description="the access token expired"'
