"""The session a request names (``Mcp-Session-Id``), or why there is none to serve it."""

from __future__ import annotations

from typing import Protocol

from starlette.types import Scope, Send

from ._http_session import HttpSession
from .asgi import CONNECTION_ERROR, error
from .common import SESSION_ID
from .protection import Protection

__all__ = ["SessionTable", "named_session", "no_session", "session_for"]


class SessionTable(Protocol):
    """What the lookup reads of its endpoint (``StreamableHTTPServer``), named without
    importing it (the endpoint imports this)."""

    @property
    def sessions(self) -> dict[str, HttpSession]: ...

    @property
    def auth(self) -> Protection | None: ...


def named_session(owner: SessionTable, scope: Scope, headers: dict[str, str]) -> HttpSession | None:
    """The live session a request names; another identity's session is not found either.
    None when there is none to serve (``no_session`` answers why). No coroutine: a POST's."""
    sid = headers.get(SESSION_ID)
    session = owner.sessions.get(sid) if sid else None
    if (
        session is None
        or session.closed
        or (owner.auth is not None and not owner.auth.owns(session, scope))
    ):
        return None
    return session


async def no_session(send: Send, headers: dict[str, str]) -> None:
    """400 without ``Mcp-Session-Id``, else 404: the session named is not one to serve."""
    if not headers.get(SESSION_ID):
        await error(send, 400, CONNECTION_ERROR, "Bad Request: missing Mcp-Session-Id header")
    else:
        await error(send, 404, CONNECTION_ERROR, "Session not found")


async def session_for(
    owner: SessionTable, scope: Scope, send: Send, headers: dict[str, str]
) -> HttpSession | None:
    """``named_session``, its refusal answered (GET, DELETE)."""
    session = named_session(owner, scope, headers)
    if session is None:
        await no_session(send, headers)
    return session
