"""Exceptions the runtime raises, and ``McpError``, which handlers raise to answer an error.

Local failures (a timeout, a closed connection, a capability the peer lacks) are distinct
classes so callers can tell them from errors the peer answered, which are always ``McpError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "HEADER_MISMATCH",
    "HTTP_STATUS",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "CapabilityError",
    "ClientCapabilityMissing",
    "ConnectionClosedError",
    "InvalidResultError",
    "McpError",
    "ProtocolVersionError",
    "RequestTimeoutError",
    "RuntimeFailure",
    "invalid_params",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
#: Codes the specification defines from 2026-07-28 on (``basic/index.md``, "Error Codes"):
#: HTTP headers that say other than the body, a client capability the request needs but did not
#: declare, and a protocol version the server does not serve (its ``data`` lists those it does).
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
#: The key, in the data of an error an HTTP transport made up for a request the server never
#: answered with JSON-RPC, of the HTTP status that refused it (None: no status, the exchange
#: itself failed). Tells "this server refuses such POSTs" from "the network failed".
HTTP_STATUS = "httpStatus"


class McpError(Exception):
    """A JSON-RPC error: raised by a handler to answer it, and raised to a caller the peer answered it.

    ``code``, ``message`` and ``data`` travel unchanged in the error response.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data

    def to_error(self) -> dict[str, Any]:
        """The ``error`` member of a JSON-RPC error response."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def invalid_params(method: str, exc: ValidationError) -> McpError:
    """The error a request whose params its class refused is answered with (-32602, pydantic's
    errors as its data, without their inputs)."""
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    return McpError(INVALID_PARAMS, f"Invalid params for {method}", errors)


class RuntimeFailure(Exception):
    """Base of the errors the runtime raises locally, never sent by the peer."""


class RequestTimeoutError(RuntimeFailure, TimeoutError):
    """A request got no answer in time; the peer was sent ``notifications/cancelled``."""

    def __init__(self, method: str, request_id: int | str, seconds: float) -> None:
        super().__init__(
            f"request {method!r} (id {request_id!r}) got no response within {seconds:g} s; "
            "it was cancelled"
        )
        self.method = method
        self.request_id = request_id
        self.seconds = seconds


class ConnectionClosedError(RuntimeFailure, ConnectionError):
    """The connection ended (peer exited, transport closed, keep-alive failed)."""


class CapabilityError(RuntimeFailure):
    """The peer did not advertise the capability a request needs, so it was not sent."""


class ClientCapabilityMissing(CapabilityError):
    """The client did not declare the capability a peer call needs (``capability``, dotted).

    Raised by the stateless era's input rounds (``eras.input_required``), and passed through by
    the layers that run handlers: here, so they need not import those rounds to know it."""

    def __init__(self, message: str, capability: str) -> None:
        super().__init__(message)
        self.capability = capability


class ProtocolVersionError(RuntimeFailure):
    """The peers share no protocol revision."""


class InvalidResultError(RuntimeFailure):
    """The peer's result does not match the method's result class."""
