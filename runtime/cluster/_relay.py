"""Forwarding a request to the worker that holds its session or task, and its answer back, via
Redis.

A handshake-era request goes to the worker owning its session; a ``tasks/*`` request naming a
task (``_targets``) to the worker running it. The worker a request lands on (the *forwarder*)
reads the body, pushes the whole request (method, path, headers, body) to the owner's inbox
list, then relays what comes back on the request's reply list: the response head, then each body
chunk as the owner's endpoint sent it (an SSE answer stream by stream, chunk by chunk), then the
end. The owner serves the request with its own endpoint, as if it had come there directly
(marked so it is never forwarded again). A client that goes away is signalled on the request's
control list, so the owner's stream ends too.

Every wait is bounded: while waiting, the forwarder checks each second that the owner is still
alive; an owner that died before answering gives the client ``404 Session not found`` (it
re-initialises), or for a task the forwarder's own answer for a task it does not hold (the
spec's -32602 "not found"); one that died mid-stream ends the stream with a JSON-RPC error for
the request. The owner pings while it serves, so a request or answer lost on the way (Redis
restarting) is given up after ``IDLE_POLLS`` seconds of nothing (503), and an envelope older
than that is not served late. Redis unreachable gives 503, and so does a session or task Redis
does not know while it is recovering from a restart (its owner may not have re-registered it
yet): 503 with ``Retry-After`` and a JSON-RPC error body, never a 404 that would end a live
session.
"""

from __future__ import annotations

import base64
import logging
import secrets
import time
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Final, cast

import anyio
import orjson
from mcpbind.runtime.transports.http.asgi import (
    CONNECTION_ERROR,
    Disconnected,
    OverBudget,
    TooLarge,
    error,
    held_for,
    read_body,
    refuse_busy,
)
from mcpbind.runtime.transports.http.common import FORWARDED_KEY, SSE, encode_event
from mcpbind.runtime.transports.http.shared_state import SharedStateUnavailable, unavailable
from starlette.types import Message, Receive, Scope, Send

from ._targets import SESSION, TASK, needs_body, replay, session_of, task_in_body, task_of

if TYPE_CHECKING:
    from mcpbind.runtime.transports.http.server import StreamableHTTPServer

    from ._redis_state import RedisState

__all__ = ["forward", "serve_forwarded"]

logger = logging.getLogger("mcpbind.runtime.cluster")

#: How long one wait for the owner lasts before checking that it is still alive.
POLL: Final = 1.0
#: How often the owner checks for the client's disconnect.
CONTROL_POLL: Final = 0.25
#: The owner says it is still at a request this often (in polls), so that a lost request or
#: answer is noticed: the forwarder gives up after ``IDLE_POLLS`` polls with nothing at all.
PING_EVERY: Final = 8
IDLE_POLLS: Final = 6


async def forward(
    state: RedisState,
    server: StreamableHTTPServer,
    scope: Scope,
    receive: Receive,
    send: Send,
    headers: dict[str, str],
) -> bool:
    """Forward the request to the worker holding its session or task and relay the answer;
    ``False`` if it is not another live worker's (this worker then answers as one process
    would). A body read to find the task is handed back to this worker's endpoint. A body read
    here is held in the server's memory budget until it was forwarded or served."""
    if scope.get(FORWARDED_KEY):  # served here: never forwarded again
        return False
    read: list[bytes] = []
    try:
        return await _route(state, server, scope, receive, send, headers, read)
    finally:
        if read:
            server.memory_budget.release(held_for(len(read[0])))


async def _route(
    state: RedisState,
    server: StreamableHTTPServer,
    scope: Scope,
    receive: Receive,
    send: Send,
    headers: dict[str, str],
    read: list[bytes],
) -> bool:
    """``forward``'s work; a body it reads is added to ``read`` (held until ``forward`` ends)."""
    kind, name, body = SESSION, session_of(server, headers), None
    if not name:
        kind, name = TASK, task_of(scope, headers)
        if not name and needs_body(server, scope, headers):
            body = await _read(server, receive, send, headers, read)
            if body is None:
                return True
            name = task_in_body(body)
        if name and state.holds_task(name):
            name = ""
    if not name:
        return await _here(server, scope, receive, send, headers, body)
    try:
        owner = await state.owner_of(kind, name)
        if owner == state.worker_id:
            owner = None
        elif owner is not None and not await state.alive(owner):
            owner = None  # gone, or only slow: its entry expires with its TTL
        if owner is None:
            if await state.recovering():
                raise SharedStateUnavailable("Redis restarted; the workers are re-registering")
            return await _here(server, scope, receive, send, headers, body)
    except SharedStateUnavailable as exc:
        await unavailable(send, exc, _request_id(body or b""))
        return True
    if body is None and scope["method"] == "POST":
        body = await _read(server, receive, send, headers, read)
        if body is None:
            return True
    gone = await _forward_to(state, server, owner, scope, receive, send, body or b"")
    if gone and kind == TASK:
        # Its holder died before answering: answered here, as for any task not held here.
        await server.serve_here(scope, replay(body or b"", receive), send, headers)
    elif gone:
        await error(send, 404, CONNECTION_ERROR, "Session not found")
    return True


async def _here(
    server: StreamableHTTPServer,
    scope: Scope,
    receive: Receive,
    send: Send,
    headers: dict[str, str],
    body: bytes | None,
) -> bool:
    """Leave the request to this worker; one whose body was read is served from here."""
    if body is None:
        return False
    await server.serve_here(scope, replay(body, receive), send, headers)
    return True


async def _read(
    server: StreamableHTTPServer,
    receive: Receive,
    send: Send,
    headers: dict[str, str],
    read: list[bytes],
) -> bytes | None:
    """The request's body, held in the memory budget and added to ``read`` (``None``: answered
    already, too large, over the budget, or the client left)."""
    try:
        body = await read_body(receive, headers, server.max_body_bytes, server.memory_budget)
    except TooLarge:
        limit = server.max_body_bytes
        await error(send, 413, CONNECTION_ERROR, f"Payload Too Large: the limit is {limit} bytes")
    except OverBudget as exc:
        await refuse_busy(send, exc)
    except Disconnected:
        pass
    else:
        read.append(body)
        return body
    return None


async def _forward_to(
    state: RedisState,
    server: StreamableHTTPServer,
    owner: str,
    scope: Scope,
    receive: Receive,
    send: Send,
    body: bytes,
) -> bool:
    """Push the request to ``owner``'s inbox and relay its answer; ``True`` if the owner died
    before answering anything (the caller says what that means)."""
    fid = secrets.token_hex(12)
    envelope = {
        "id": fid,
        "at": time.time(),
        "from": state.worker_id,
        "method": scope["method"],
        "path": scope["path"],
        "query": scope.get("query_string", b"").decode("latin-1"),
        "headers": [[k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"]],
        "client": list(scope["client"]) if scope.get("client") else None,
        "server": list(scope["server"]) if scope.get("server") else None,
        "body": base64.b64encode(body).decode("ascii"),
    }
    try:
        await state.push(state.key("fwd", owner), envelope, ttl=30.0)
    except SharedStateUnavailable as exc:
        await unavailable(send, exc, _request_id(body))
        return False
    server.counters["forwarded_out"] += 1
    gone = False
    async with anyio.create_task_group() as tg:
        tg.start_soon(_watch_client, state, fid, receive, tg.cancel_scope)
        gone = await _relay(state, owner, fid, send, _request_id(body))
        tg.cancel_scope.cancel()
    return gone


async def _watch_client(
    state: RedisState, fid: str, receive: Receive, scope: anyio.CancelScope
) -> None:
    """The client went away: tell the owner, and stop relaying."""
    while (await receive())["type"] != "http.disconnect":
        pass
    with suppress(SharedStateUnavailable):
        await state.push(state.key("ctl", fid), {"disconnect": True}, ttl=30.0)
    scope.cancel()


def _request_id(body: bytes) -> Any:
    """The id of the one request a POST carries (``None``: none, or a batch)."""
    try:
        message = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None
    if isinstance(message, dict) and "method" in message:
        return cast("dict[str, Any]", message).get("id")
    return None


async def _relay(state: RedisState, owner: str, fid: str, send: Send, request_id: Any) -> bool:
    """Relay the owner's answer to ``send``; ``True`` (nothing sent) if the owner died before
    answering."""
    started = False
    streaming = False
    idle = 0
    reply = state.key("reply", fid)
    while True:
        try:
            item = await state.pop(reply, POLL)
            idle = 0 if item is not None else idle + 1
            if item is None and not await state.alive(owner, fresh=True):
                raise _OwnerGone
            if idle >= IDLE_POLLS:
                raise SharedStateUnavailable("the owning worker lost the request")
        except (SharedStateUnavailable, _OwnerGone) as exc:
            if not started:
                if isinstance(exc, _OwnerGone):
                    if not await _recovering(state):
                        return True
                    exc = SharedStateUnavailable("Redis restarted; the owner re-registers")
                await unavailable(send, exc, request_id)
            else:
                logger.warning("forwarded stream %s cut: %s", fid, exc)
                last = b""
                if streaming and request_id is not None:
                    # The request will get no answer now: say so on its stream, not by silence.
                    failed = {"code": CONNECTION_ERROR, "message": f"{exc}; re-initialize"}
                    last = encode_event({"jsonrpc": "2.0", "id": request_id, "error": failed})
                await send({"type": "http.response.body", "body": last, "more_body": False})
            return False
        if item is None or "ping" in item:
            continue
        if "status" in item:
            started = True
            streaming = any(
                k.lower() == "content-type" and v.startswith(SSE) for k, v in item["headers"]
            )
            await send(
                {
                    "type": "http.response.start",
                    "status": item["status"],
                    "headers": [
                        (k.encode("latin-1"), v.encode("latin-1")) for k, v in item["headers"]
                    ],
                }
            )
            if "body" not in item:
                continue
        end = bool(item.get("end"))
        chunk = base64.b64decode(item.get("body", ""))
        await send({"type": "http.response.body", "body": chunk, "more_body": not end})
        if end:
            return False


async def _recovering(state: RedisState) -> bool:
    """Whether Redis is in its restart window (an owner missing its heartbeat may be alive)."""
    try:
        return await state.recovering()
    except SharedStateUnavailable:
        return True


class _OwnerGone(Exception):
    def __str__(self) -> str:
        return "the worker owning the session stopped"


async def serve_forwarded(
    state: RedisState, server: StreamableHTTPServer, envelope: dict[str, Any]
) -> None:
    """Serve a request another worker forwarded, relaying the answer to its reply list."""
    fid = envelope["id"]
    if time.time() - float(envelope.get("at", 0.0)) > IDLE_POLLS * POLL:
        # Its forwarder has given up on it (and answered its client): do not act on it now.
        logger.warning("forwarded request %s dropped: it waited too long to be served", fid)
        return
    reply = state.key("reply", fid)
    body = base64.b64decode(envelope["body"])
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": envelope["method"],
        "scheme": "http",
        "path": envelope["path"],
        "raw_path": envelope["path"].encode("latin-1", "replace"),
        "query_string": envelope["query"].encode("latin-1"),
        "root_path": "",
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in envelope["headers"]],
        "client": tuple(envelope["client"]) if envelope.get("client") else None,
        "server": tuple(envelope["server"]) if envelope.get("server") else None,
        "state": {},
        FORWARDED_KEY: True,
    }
    gone = anyio.Event()
    body_given = False

    async def receive() -> Message:
        nonlocal body_given
        if not body_given:
            body_given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    head: dict[str, Any] = {}

    async def send(message: Message) -> None:
        if gone.is_set():
            raise OSError("the forwarding worker's client is gone")
        kind = message["type"]
        if kind == "http.response.start":
            # Held until the first body chunk, which always follows: one push for both.
            head["status"] = message["status"]
            head["headers"] = [
                [bytes(k).decode("latin-1"), bytes(v).decode("latin-1")]
                for k, v in message.get("headers", ())
            ]
            return
        if kind != "http.response.body":
            return
        item = {"body": base64.b64encode(message.get("body", b"")).decode("ascii"), **head}
        head.clear()
        if not message.get("more_body", False):
            item["end"] = True
        try:
            await state.push(reply, item)
        except SharedStateUnavailable as exc:
            gone.set()
            raise OSError(str(exc)) from exc

    server.counters["forwarded_in"] += 1
    async with anyio.create_task_group() as tg:
        tg.start_soon(_watch_control, state, fid, envelope.get("from"), gone)
        try:
            await server(scope, receive, send)
        except OSError:
            pass
        except Exception:
            logger.exception("forwarded request %s failed", fid)
        finally:
            tg.cancel_scope.cancel()


async def _watch_control(
    state: RedisState, fid: str, forwarder: str | None, gone: anyio.Event
) -> None:
    """Set ``gone`` when the forwarder signals its client left, or the forwarder died; say
    now and then that the request is still being served."""
    control = state.key("ctl", fid)
    checks = 0
    while not gone.is_set():
        await anyio.sleep(CONTROL_POLL)
        checks += 1
        try:
            signalled = await state.pop_now(control) is not None
            if checks % PING_EVERY == 0:
                await state.push(state.key("reply", fid), {"ping": 1})
                if forwarder and not await state.alive(forwarder, fresh=True):
                    signalled = True
            if signalled:
                gone.set()
        except SharedStateUnavailable:
            continue
