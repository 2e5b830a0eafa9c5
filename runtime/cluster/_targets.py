"""What a request is about, for the forwarder: the session or the task another worker may hold.

A handshake-era request names its session in ``Mcp-Session-Id``. A ``tasks/*`` request names its
task: in the stateless era in the ``Mcp-Name`` routing header (``Mcp-Method`` says it is a task
request), which the owner then checks against the body as it checks any routing header; on a
server with ``stateless=True``, a handshake-era POST (2025-11-25 tasks, no session to go by) only
in its body's ``params.taskId``, so that body is read first (``needs_body``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, cast

import orjson
from mcpbind.generated.names import TASKS_CANCEL, TASKS_GET, TASKS_RESULT, TASKS_UPDATE
from mcpbind.runtime.eras.stateless import STATELESS_REVISIONS
from mcpbind.runtime.transports.http.binding import (
    METHOD_HEADER,
    NAME_HEADER,
    decode_plain,
    decode_value,
)
from mcpbind.runtime.transports.http.common import PROTOCOL_VERSION, SESSION_ID
from starlette.types import Message, Receive, Scope

if TYPE_CHECKING:
    from mcpbind.runtime.transports.http.server import StreamableHTTPServer

__all__ = ["SESSION", "TASK", "needs_body", "replay", "session_of", "task_in_body", "task_of"]

SESSION: Final = "session"
TASK: Final = "task"
#: The requests about one task whose answer only its holder knows: the tasks extension's
#: (``tasks/list`` and ``tasks/result`` are gone there) and 2025-11-25's (``tasks/list`` lists
#: what the worker it lands on holds). Named here, not imported from ``runtime.tasks``, which
#: the transport does not otherwise load.
EXTENSION_METHODS: Final = frozenset({TASKS_GET, TASKS_UPDATE, TASKS_CANCEL})
HANDSHAKE_METHODS: Final = frozenset({TASKS_GET, TASKS_RESULT, TASKS_CANCEL})
_METHOD: Final = METHOD_HEADER.encode()
_NAME: Final = NAME_HEADER.encode()


def _stateless_era(headers: dict[str, str]) -> bool:
    return (headers.get(PROTOCOL_VERSION) or "").strip() in STATELESS_REVISIONS


def session_of(server: StreamableHTTPServer, headers: dict[str, str]) -> str:
    """The session id of a request whose session may be another worker's, else ``""``."""
    if server.stateless:
        return ""
    sid = headers.get(SESSION_ID)
    if not sid or sid in server.sessions or _stateless_era(headers):
        return ""
    return sid


def task_of(scope: Scope, headers: dict[str, str]) -> str:
    """The task a stateless-era ``tasks/*`` request names in its routing headers, else ``""``
    (the first of repeated ones: the owner refuses repeats, as one process would)."""
    if not _stateless_era(headers):
        return ""
    method = named = None
    for raw, value in scope["headers"]:
        if raw == _METHOD and method is None:
            method = value.decode("latin-1")
        elif raw == _NAME and named is None:
            named = value.decode("latin-1")
    if method is None or named is None or decode_plain(method) not in EXTENSION_METHODS:
        return ""
    return decode_value(named) or ""


def needs_body(server: StreamableHTTPServer, scope: Scope, headers: dict[str, str]) -> bool:
    """Whether only the body can say which task a request is about: a handshake-era POST to
    a server without sessions."""
    return server.stateless and scope["method"] == "POST" and not _stateless_era(headers)


def task_in_body(body: bytes) -> str:
    """The ``taskId`` of a handshake-era ``tasks/get|result|cancel`` body, else ``""``."""
    if b'"tasks/' not in body:
        return ""  # most requests: no parse
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return ""
    if type(message) is not dict:
        return ""
    request = cast("dict[str, object]", message)
    if request.get("method") not in HANDSHAKE_METHODS:
        return ""
    params = request.get("params")
    task_id = cast("dict[str, object]", params).get("taskId") if type(params) is dict else None
    return task_id if type(task_id) is str else ""


def replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` with the body already read from it given back first."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
