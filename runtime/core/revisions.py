"""Which revisions belong to which era, as the generated tables say, for every layer to read.

The eras implement the two lifecycles; transports need only to tell a request's era apart (an
HTTP server routes a stateless-era POST differently), so the facts live here, below both.
"""

from __future__ import annotations

from typing import Final

import mcpbind.generated as generated

from .errors import (
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
)

__all__ = ["ASSUME_INITIALIZED", "HANDSHAKE_REVISIONS", "MODERN_ERRORS", "STATELESS_REVISIONS"]

HANDSHAKE_REVISIONS: tuple[str, ...] = tuple(
    r for r in generated.REVISIONS if generated.ERAS[r] == "handshake"
)
STATELESS_REVISIONS: tuple[str, ...] = tuple(
    r for r in generated.REVISIONS if generated.ERAS[r] == "stateless"
)

#: The ``Connection.extra`` key by which a transport asks ``Server.serve`` to start the session
#: as already initialised at the revision it names: for sessions that never see ``initialize``
#: (stateless Streamable HTTP, where each POST is a session of its own).
ASSUME_INITIALIZED: Final = "mcpbind.assume_initialized"

#: Error codes only a stateless-era server sends: getting one to a probe means "stateless era".
MODERN_ERRORS: Final = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)
