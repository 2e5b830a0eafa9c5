"""One POST's exchange with a session: deliver its messages, answer 202, JSON or SSE.

Both eras go through here. A handshake-era POST goes to its long-lived session; a
stateless-era one (and every POST of a ``stateless=True`` server) gets a session that serves
nothing else while it runs: its own, or an idle one of the pool (``pooled``). The eras differ
in three ways, all decided by ``modern``: an immediate error answer takes the HTTP status its
code calls for (400, 404) instead of 200; SSE streams have no event ids and no priming event
(they are not resumable); and a client closing the SSE response cancels the request (the
session is cancelled: it serves nothing else).
"""

from __future__ import annotations

import asyncio
import math
import types
from collections.abc import Coroutine, Generator
from typing import TYPE_CHECKING, Any, Final

import anyio
from mcpbind.generated.names import INITIALIZE, SUBSCRIPTIONS_LISTEN
from mcpbind.runtime.core import jsonrpc as rpc
from mcpbind.runtime.core.errors import INVALID_REQUEST, ConnectionClosedError
from mcpbind.runtime.core.handler_tasks import Borrowed
from mcpbind.runtime.core.loop_path import AsyncioPath
from mcpbind.runtime.core.transport import SERVING, Envelope
from starlette.types import Receive, Scope, Send

from ._http_session import HttpRequestContext, HttpSession
from ._pool import SessionPool
from ._sse_writer import WATCH_AFTER, write_sse
from ._streams import JSON_MODE, SSE_MODE, RequestId, Stream
from .asgi import CONNECTION_ERROR, RETRY_AFTER, error, respond, status_for
from .common import JSON, PROTOCOL_VERSION, SESSION_ID, accepted

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue
    from mcpbind.runtime.core.session import Session

    from .server import StreamableHTTPServer

__all__ = ["accepted", "batch_allowed", "exchange", "per_request", "poolable", "pooled"]

_COMPLETE = "complete"
#: The kinds of result after which nothing of the request runs on.
_FINAL = frozenset({_COMPLETE, "input_required"})

#: The first revision without JSON-RPC batches.
BATCHES_REMOVED: Final = "2025-06-18"
_JSON_TYPE: Final = (b"content-type", JSON.encode())
_RETRY_AFTER: Final = (b"retry-after", RETRY_AFTER.encode())


async def batch_allowed(send: Send, revision: str | None) -> bool:
    """JSON-RPC batches went away in 2025-06-18: refuse one sent at that revision or later."""
    if revision is not None and revision >= BATCHES_REMOVED:
        await error(
            send,
            400,
            INVALID_REQUEST,
            f"Invalid Request: JSON-RPC batches are not part of MCP {revision}",
        )
        return False
    return True


def initial_mode(
    owner: StreamableHTTPServer, accept: tuple[bool, bool], listen: bool
) -> str | None:
    """JSON, SSE, or undecided (``None``) for a POST, from the options and ``Accept``.

    Lenient in both eras: a client that accepts only one of the two (the spec says it must
    list both) gets that one, which answers it correctly instead of refusing it for nothing.
    A ``subscriptions/listen`` answer is a stream of notifications, so always SSE.
    """
    json_ok, sse_ok = accept
    if listen or not json_ok:
        return SSE_MODE
    if not sse_ok:
        return JSON_MODE
    if owner.json_response is None:
        return None
    return JSON_MODE if owner.json_response else SSE_MODE


async def exchange(
    owner: StreamableHTTPServer,
    session: HttpSession,
    scope: Scope,
    receive: Receive,
    send: Send,
    headers: dict[str, str],
    messages: list[Any],
    batch: bool,
    size: int = 0,
    modern: bool = False,
    here: bool = False,
    accept: tuple[bool, bool] | None = None,
) -> Any:
    """Deliver POSTed messages; answer 202, or with the JSON or SSE carrying the responses.
    ``size``: a lone message's length, as ``parse_post`` gives it (0: the session measures).
    ``here``: a lone request (``pooled``) is served in this task when the session allows it
    (``Session.serve_here``), as is a handshake-era one its session's idle reader would read
    next. ``accept``: what ``Accept`` admits, when known (``accepted``).

    Returns the JSON answer when it was answered at once with nothing of it pending, else None."""
    if batch:
        request_ids: list[RequestId] = [m["id"] for m in messages if "method" in m and "id" in m]
    else:  # one message: no list to filter, no repeats to look for
        first = messages[0]
        request_ids = [first["id"]] if "method" in first and "id" in first else []
    if not request_ids:
        extra = _id_header(session)
        try:
            await session.deliver(messages, HttpRequestContext(scope, session.id))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            await error(send, 404, CONNECTION_ERROR, "Session not found")
            return None
        await respond(send, 202, headers=extra)
        return None
    if batch and len(set(request_ids)) != len(request_ids):
        await error(send, 400, INVALID_REQUEST, "Invalid Request: a batch repeats a request id")
        return None
    by_request = session.by_request
    clash = (
        next((rid for rid in request_ids if rid in by_request), None)
        if batch or by_request
        else None
    )
    if clash is not None:
        await error(
            send, 400, INVALID_REQUEST, "Invalid Request: this request id is already in use", clash
        )
        return None
    version = headers.get(PROTOCOL_VERSION)
    if version is None and messages[0].get("method") == INITIALIZE:
        params: JsonValue = messages[0].get("params")
        version = params.get("protocolVersion") if type(params) is dict else None
    if accept is None:
        accept = accepted(headers.get("accept"))
    if accept[0] and accept[1] and owner.json_response is None and not modern:
        mode: str | None = None  # ``initial_mode``'s usual answer, without the call
    else:
        mode = initial_mode(owner, accept, modern and messages[0]["method"] == SUBSCRIPTIONS_LISTEN)
    stream, token = session.open_stream(request_ids, None if mode == SSE_MODE else mode, version)
    if mode == SSE_MODE:
        async with session.lock:
            await session.commit_sse(stream)

    context = HttpRequestContext(scope, session.id, session, stream)
    # A lone request is served in this task when the session allows it: a pooled one
    # (``here``), or one a session's reader, waiting idle, would read next (``serves_here``).
    serving: Session | None = (
        session.connection.extra.get(SERVING)
        if here or (not modern and not batch and session.serves_here(messages[0]))
        else None
    )
    try:
        if serving is not None:
            message = messages[0]
            envelope = Envelope(message, context, None, size, False, True)  # ``request``
            served = await serving.serve_here(message, envelope)
            if isinstance(served, dict):  # the answer, handed back: written from here
                if session.answered_here(stream, request_ids[0], served):
                    head, body = _json_messages(session, stream, token, served, modern)
                    await send(head)
                    await send(body)
                    return served
                await _hand_on(session, serving, served, request_ids[0], modern)
            elif served is not None:  # its handler waits, in this task
                answer = _answer(owner, session, stream, token, receive, send, False, modern)
                return await _beside(session, served, answer, request_ids[0], modern)
        elif batch or not session.deliver_nowait(messages[0], context, size):
            await session.deliver(messages, context)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        stream.detach(token)
        await error(send, 404, CONNECTION_ERROR, "Session not found")
        return None
    if stream.done and stream.mode != SSE_MODE:
        # Answered already (served here, its handler never waited): written from this
        # coroutine, without ``_answer``'s (which waits, and which ``_beside`` runs apart).
        answer, head, body = _json_reply(session, stream, token, batch, modern)
        await send(head)
        await send(body)
        return answer
    return await _answer(owner, session, stream, token, receive, send, batch, modern)


async def _hand_on(
    session: HttpSession, serving: Session, answer: Any, request_id: RequestId, modern: bool
) -> None:
    """Send an answer ``serve_here`` handed back whose stream had something before it (it is
    SSE: the answer becomes an event after those), as the session sends any; a cancellation
    meanwhile settles the stream, as ``_beside`` does for a handler that waits."""
    try:
        await serving.send_raw(answer, request_id)
    except ConnectionClosedError:
        pass  # a closed session's answer is dropped
    except BaseException:
        if not modern:
            session.abandon(request_id)
        raise


async def _beside(
    session: HttpSession,
    borrowed: Borrowed,
    answer: Coroutine[Any, Any, Any],
    request_id: RequestId,
    modern: bool,
) -> Any:
    """A request served in the POST's task whose handler has to wait: the handler stays in
    this task (``Borrowed``: what it bound to its task holds, and it is cancelled with the
    POST, as the pooled session's request was), and a new task writes the POST's answer
    meanwhile (JSON once done, or SSE as it goes); this one waits for it after.

    In a handshake-era session a client leaving does not stop the request (the writer
    detaches; the handler's events go on to the store); only this task's own cancellation
    (the ASGI server's: uvicorn and starlette tell a disconnect through ``receive``) cancels
    it, and its stream is then settled, so that a client resuming it is not left waiting."""
    path = session.path
    assert isinstance(path, AsyncioPath)  # a session serves here on the native path only
    writer = path.spawn(answer)
    try:
        await borrowed.run()
    except BaseException:
        writer.cancel()
        if not modern:
            session.abandon(request_id)
        raise
    return await writer


async def _answer(
    owner: StreamableHTTPServer,
    session: HttpSession,
    stream: Stream,
    token: int,
    receive: Receive,
    send: Send,
    batch: bool,
    modern: bool,
) -> Any:
    """The POST's answer, once its messages are delivered: 202, JSON or SSE (``exchange``)."""
    if stream.mode != SSE_MODE:
        if not stream.done:  # else answered already (served here): nothing to wait for
            clock = session.clock
            deadline = clock() + owner.sse_after if stream.mode is None else math.inf
            if session.native:
                # The session's task is due to run next: after one turn of the loop a handler
                # that never waits has answered, so most POSTs need no future, and no timer,
                # to wait on.
                await _one_turn()
            while not stream.done and stream.mode != SSE_MODE:
                if stream.mode is None and clock() >= deadline:
                    async with session.lock:
                        await session.commit_sse(stream)
                    break
                await stream.signal.wait(deadline - clock())
        if stream.mode != SSE_MODE:
            answer, head, body = _json_reply(session, stream, token, batch, modern)
            await send(head)
            await send(body)
            return answer if stream.done else None
    on_gone = session.cancel if modern else None
    extra = _id_header(session)
    await write_sse(
        session, stream, token, receive, send, extra, WATCH_AFTER, owner.sse_keepalive, on_gone
    )
    return None


def _json_reply(
    session: HttpSession, stream: Stream, token: int, batch: bool, modern: bool
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """A POST's JSON answer (or 202) once its stream holds it: the answer, and the ASGI start
    and body messages (``asgi.respond``, with the session's header encoded once for all)."""
    queue = stream.queue
    if not queue:
        stream.detach(token)
        headers = [(b"content-length", b"0"), *session.id_header]
        head = {"type": "http.response.start", "status": 202, "headers": headers}
        return None, head, {"type": "http.response.body", "body": b""}
    answer = list(queue) if batch else queue[0]
    queue.clear()
    return (answer, *_json_messages(session, stream, token, answer, modern and not batch))


def _json_messages(
    session: HttpSession, stream: Stream, token: int, answer: Any, single: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ASGI start and body messages of a JSON answer (``single``: a lone stateless-era
    answer, whose error code decides the status); the POST's response leaves its stream."""
    stream.detach(token)
    status = status_for(answer) if single and "error" in answer else 200
    body = rpc.encode(answer)
    headers = [(b"content-length", b"%d" % len(body)), _JSON_TYPE, *session.id_header]
    if status == 503:  # busy: a client may retry (asgi.ERROR_STATUS)
        headers.append(_RETRY_AFTER)
    head = {"type": "http.response.start", "status": status, "headers": headers}
    return head, {"type": "http.response.body", "body": body}


def _id_header(session: HttpSession) -> dict[str, str]:
    """``Mcp-Session-Id`` for an answer that is not JSON (made when one is)."""
    return {SESSION_ID: session.id} if session.id is not None else {}


@types.coroutine
def _one_turn() -> Generator[None, None, None]:
    """``asyncio.sleep(0)`` without its own coroutine: the task yields once."""
    yield


async def per_request(
    owner: StreamableHTTPServer,
    scope: Scope,
    receive: Receive,
    send: Send,
    headers: dict[str, str],
    messages: list[Any],
    batch: bool,
    assume: str | None,
    size: int = 0,
    modern: bool = False,
) -> None:
    """Serve one POST on a session of its own, started as initialised at ``assume``.

    On asyncio the session runs in a bare task, awaited at the end (a task group per POST
    was a tenth of its cost); it ends once its input does (``terminate``), and goes with
    the POST if that is cancelled. A stateless-era request that can be (``poolable``) is
    served on an idle session of the pool instead (``pooled``)."""
    if modern and owner.pool is not None and poolable(messages[0]):
        await pooled(owner, owner.pool, scope, receive, send, headers, messages, assume, size)
        return
    session = HttpSession(owner, None, assume=assume, resumable=False)
    if not session.native:
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run)
            try:
                await exchange(
                    owner, session, scope, receive, send, headers, messages, batch, size, modern
                )
            finally:
                session.terminate("the request is complete")
        return
    task = session.start_alone()
    try:
        await exchange(owner, session, scope, receive, send, headers, messages, batch, size, modern)
    finally:
        session.terminate("the request is complete")
        try:
            await task
        except asyncio.CancelledError:
            # The session was stopped on purpose (its client left, or it outlived its grace):
            # it ends quietly. Only a cancellation of this POST itself goes on up.
            if not task.cancelled() or _cancelling():
                task.cancel()
                raise
        except BaseException:
            task.cancel()
            raise


def poolable(message: dict[str, Any]) -> bool:
    """Whether a stateless-era request leaves nothing behind in the session that served it
    once answered: not ``subscriptions/listen`` (a stream), nor a task-augmented request (its
    task outlives the request)."""
    params = message.get("params")
    return message.get("method") != SUBSCRIPTIONS_LISTEN and not (
        type(params) is dict and "task" in params
    )


async def pooled(
    owner: StreamableHTTPServer,
    pool: SessionPool,
    scope: Scope,
    receive: Receive,
    send: Send,
    headers: dict[str, str],
    messages: list[Any],
    assume: str | None,
    size: int = 0,
) -> None:
    """Serve a stateless-era request on an idle session of the pool (a new one if none is).

    A session and its task per request were half the cost of a stateless-era POST. Nothing
    of one request stays for the next: the era's lifecycle takes the client's version,
    capabilities and identity from each request's ``_meta`` (``StatelessServer.gate``), a
    server sends no requests in this era, and a session serves one request at a time. It
    goes back to the pool only when its request was answered at once (JSON) with an error or
    a final result (``_finished``) and nothing of it is pending; else (an SSE answer, a task,
    a cancellation, a failure) it ends like any per-request session. The request is served in
    this task (``Session.serve_here``), not handed to the session's reading task, once the
    session runs on the native path. (Work a handler starts
    itself with ``context.session.start_soon`` outlives its request on a pooled session,
    until the server shuts down: in this era, use a task.)"""
    session = pool.take(owner, assume)
    if session.native and SERVING not in session.connection.extra:
        # A new session: its task sets it up in one step, and then this one serves the request
        # (handed to its reading task instead, the request would stay referenced there).
        await _one_turn()
    try:
        answer = await exchange(
            owner, session, scope, receive, send, headers, messages, False, size, True, True
        )
    except BaseException:
        session.cancel()  # the POST itself is stopped or failed: so is its request, at once
        session.terminate("the request is complete")
        raise
    if not (_finished(answer) and session.idle() and pool.give_back(session)):
        session.terminate("the request is complete")


def _finished(answer: JsonValue) -> bool:
    """Whether a JSON answer ends all the work of its request: an error, or a complete (or
    input-required) result. A task's result (``resultType: task``) does not: its handler goes
    on, and what it sends must not reach a later request that reuses its id."""
    if type(answer) is not dict:
        return False
    result: JsonValue = answer.get("result")
    if type(result) is not dict:
        return "error" in answer
    return result.get("resultType", _COMPLETE) in _FINAL


def _cancelling() -> bool:
    """Whether the running task (the POST's) has been asked to stop."""
    current = asyncio.current_task()
    return current is not None and current.cancelling() > 0
