"""Getting the user through the authorization server and back: pluggable redirect handlers.

A redirect handler is given the authorization URL and returns the query parameters of the
redirect back to ``redirect_uri`` (``code``, ``state``, ``iss`` or ``error``); the client checks
them. ``LoopbackRedirectHandler`` is for command-line apps: it opens the browser and waits for
the callback on a small HTTP server on 127.0.0.1. ``FollowRedirectHandler`` is headless: it
fetches the authorization URL itself and reads the redirect, for tests and conformance runs
against an authorization server that approves without a user.
"""

from __future__ import annotations

import errno
import logging
import socket
import sys
import webbrowser
from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx

from ._errors import AuthorizationError, AuthorizationResponseError
from ._http import oauth_client

logger = logging.getLogger(__name__)


@runtime_checkable
class RedirectHandler(Protocol):
    """Sends the user to ``authorization_url``; returns the redirect's query parameters."""

    @property
    def redirect_uri(self) -> str: ...

    async def __call__(self, authorization_url: str) -> Mapping[str, str]: ...


def callback_parameters(query: str) -> dict[str, str]:
    """The parameters of a redirect's query; a parameter given twice is refused (RFC 6749 3.1)."""
    parsed = parse_qs(query, keep_blank_values=True)
    repeated = sorted(name for name, values in parsed.items() if len(values) > 1)
    if repeated:
        raise AuthorizationResponseError(
            f"authorization response repeats parameter(s) {', '.join(repeated)}"
        )
    return {name: values[0] for name, values in parsed.items()}


class FollowRedirectHandler:
    """Fetches the authorization URL and reads the redirect it answers with (no user involved).

    For authorization servers that approve at once: test servers, the conformance suite.
    """

    def __init__(
        self,
        redirect_uri: str = "http://localhost:3000/callback",
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
    ) -> None:
        self._redirect_uri = redirect_uri
        self._transport = transport
        self._timeout = timeout

    @property
    def redirect_uri(self) -> str:
        return self._redirect_uri

    async def __call__(self, authorization_url: str) -> Mapping[str, str]:
        async with oauth_client(self._transport, self._timeout) as http:
            response = await http.get(authorization_url, follow_redirects=False)
        location: str | None = response.headers.get("location")
        if not response.is_redirect or location is None:
            raise AuthorizationResponseError(
                f"the authorization endpoint answered {response.status_code}, not a redirect"
            )
        target = urlsplit(location)
        expected = urlsplit(self._redirect_uri)
        if (target.scheme, target.netloc, target.path) != (
            expected.scheme,
            expected.netloc,
            expected.path,
        ):
            raise AuthorizationResponseError("the authorization server redirected elsewhere")
        return callback_parameters(target.query)


def _show(url: str) -> None:
    """Open the browser on ``url`` and say so on stderr (where a CLI's user looks)."""
    print(
        f"Opening your browser to authorize; if it does not open, visit:\n  {url}", file=sys.stderr
    )
    webbrowser.open(url)


class LoopbackRedirectHandler:
    """A callback server on ``http://127.0.0.1:<port><path>`` for command-line apps.

    The redirect URI names the loopback address literally, as RFC 8252 section 7.3 recommends
    (``localhost`` may resolve to another interface). ``port`` 0 lets the kernel pick one when
    the redirect URI is first asked for (before registering). From then on the handler holds
    that port, bound and listening, until the redirect has been served (or ``close()``): no
    other process can take it meanwhile and receive the user's authorization code (RFC 8252
    section 8.3). A later flow binds the same port again; a port in use gives an
    ``AuthorizationError``. ``show`` presents the authorization URL to the user (default: open
    the browser and print it on stderr). The server runs only while waiting, at most
    ``timeout`` seconds.
    """

    def __init__(
        self,
        port: int = 0,
        path: str = "/callback",
        *,
        host: str = "127.0.0.1",
        show: Callable[[str], None] = _show,
        timeout: float = 300.0,
    ) -> None:
        self.host = host
        self.path = path
        self._port = port
        self._sock: socket.socket | None = None
        #: Bound once already: the port is known (later flows bind it again when they start).
        self._chosen = False
        self._show = show
        self._timeout = timeout

    @property
    def port(self) -> int:
        """The callback's port, bound (and held) from the first time it is asked for."""
        if not self._chosen:
            self._hold()
        return self._port

    @property
    def redirect_uri(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.path}"

    def _hold(self) -> socket.socket:
        """The listening socket for the callback, bound now unless held already."""
        if self._sock is None:
            from mcpbind.runtime.transports.http.uvicorn import tcp_listener

            try:
                sock = tcp_listener(self.host, self._port)
            except OSError as exc:
                reason = "in use" if exc.errno == errno.EADDRINUSE else exc.strerror
                raise AuthorizationError(
                    f"cannot receive the authorization redirect on {self.host}:{self._port}:"
                    f" {reason}"
                ) from exc
            # Listening, not just bound: on Linux another SO_REUSEADDR socket may still bind
            # a port that is only bound.
            sock.listen()
            self._sock = sock
            self._port = sock.getsockname()[1]
            self._chosen = True
        return self._sock

    def close(self) -> None:
        """Release the port if held (a later flow binds it again)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> LoopbackRedirectHandler:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        # A handler dropped unclosed lets its port go quietly (no ResourceWarning).
        if getattr(self, "_sock", None) is not None:
            self.close()

    async def __call__(self, authorization_url: str) -> Mapping[str, str]:
        from mcpbind.runtime.transports.http.uvicorn import serving
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import HTMLResponse, Response
        from starlette.routing import Route

        received: list[str] = []
        done = anyio.Event()

        async def callback(request: Request) -> Response:
            if not done.is_set():
                received.append(request.url.query)
                done.set()
            return HTMLResponse("<p>Authorization received; you can close this window.</p>")

        app = Starlette(routes=[Route(self.path, callback)])
        # The flow owns the held socket from here and closes it whichever way it ends.
        sock, self._sock = self._hold(), None
        try:
            async with serving(app, self.host, self._port, sock=sock):
                await anyio.to_thread.run_sync(self._show, authorization_url)
                with anyio.move_on_after(self._timeout):
                    await done.wait()
        finally:
            sock.close()
        if not received:
            raise AuthorizationResponseError(
                f"no authorization response within {self._timeout:.0f} s"
            )
        return callback_parameters(received[0])
