"""Answering one request: its params parsed, its handler run, its result dumped, and every
failure on the way turned into the JSON-RPC error that says what went wrong."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from . import jsonrpc as rpc
from .context import RequestContext
from .errors import INTERNAL_ERROR, McpError, invalid_params
from .logsafe import printable
from .routing import Route

if TYPE_CHECKING:
    from .jsonvalue import JsonValue
    from .session import Session

__all__ = ["respond"]

logger = logging.getLogger("mcpbind.runtime")

RequestId = int | str


async def respond(
    session: Session,
    route: Route,
    request_id: RequestId,
    method: str,
    raw: dict[str, Any] | None,
    transport_context: Any,
) -> dict[str, Any]:
    """The response to request ``request_id`` of ``session`` (a result or an error)."""
    try:
        params = route.parse_params(raw)
    except ValidationError as exc:
        return {"jsonrpc": "2.0", "id": request_id, "error": invalid_params(method, exc).to_error()}
    except McpError as exc:
        return {"jsonrpc": "2.0", "id": request_id, "error": exc.to_error()}
    except Exception:
        logger.exception(
            "params of %s (request %r) could not be read",
            printable(method),
            printable(request_id),
        )
        return rpc.error_response(request_id, INTERNAL_ERROR, "Internal error")
    meta: JsonValue = raw.get("_meta") if raw else None
    context = RequestContext(
        session, request_id, method, meta if type(meta) is dict else None, transport_context
    )
    assert route.handler is not None
    try:
        result = await route.handler(params, context)
        return {"jsonrpc": "2.0", "id": request_id, "result": route.dump_result(result, raw)}
    except McpError as exc:
        return {"jsonrpc": "2.0", "id": request_id, "error": exc.to_error()}
    except Exception:
        logger.exception(
            "handler of %s (request %r) failed", printable(method), printable(request_id)
        )
        return rpc.error_response(request_id, INTERNAL_ERROR, "Internal error")
