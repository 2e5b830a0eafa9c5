"""A server lifecycle for both eras that loads the stateless era's code when it is first needed.

``BothEras`` serves a session that opens with ``initialize`` (or with a request without a
``_meta`` version, refused as before ``initialize``) with the handshake lifecycle, exactly as
``StatelessServer`` hands such a session to its ``legacy`` one, and builds the
``StatelessServer`` (importing ``stateless`` and ``input_required``) with the first message
that needs it. A server of both eras that meets only handshake-era clients, as a stdio server
usually does, never loads them: 0.2 MiB of an idle server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcpbind import generated
from mcpbind.generated.names import META_PROTOCOL_VERSION
from mcpbind.runtime.core.errors import McpError
from mcpbind.runtime.core.routing import OutgoingCall
from mcpbind.runtime.core.session import Route, Session

from .lifecycle import LEGACY, HandshakeServer, ServerSide, era_revisions, handshake_opens

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

    from .stateless import StatelessServer

__all__ = ["LEGACY", "BothEras"]


def _version(params: dict[str, Any] | None) -> JsonValue:
    meta: JsonValue = params.get("_meta") if params else None
    return meta.get(META_PROTOCOL_VERSION) if type(meta) is dict else None


class BothEras:
    """``StatelessServer(supported, legacy=legacy)``, built when a message needs it."""

    def __init__(self, supported: Sequence[str], legacy: HandshakeServer) -> None:
        # Checked now, as StatelessServer checks them: a bad revision fails the Server's making.
        self.supported = era_revisions("stateless", supported)
        self.legacy = legacy
        self._stateless: StatelessServer | None = None

    @property
    def stateless(self) -> StatelessServer:
        """The stateless-era lifecycle (every message is its once it is built)."""
        if self._stateless is None:
            from .stateless import StatelessServer

            self._stateless = StatelessServer(self.supported, legacy=self.legacy)
        return self._stateless

    def gate(
        self, server: ServerSide, session: Session, method: str, params: dict[str, Any] | None
    ) -> Route | McpError | None:
        if self._stateless is None:
            peer = session.peer
            era = peer.era  # LEGACY for every request of a handshake session: tested first
            if era == LEGACY:
                return self.legacy.gate(server, session, method, params)
            if handshake_opens(peer, method, _version(params)):  # as StatelessServer hands on
                return self.legacy.gate(server, session, method, params)
        return self.stateless.gate(server, session, method, params)

    def assume_initialized(self, session: Session, revision: str) -> None:
        if self._stateless is None and generated.ERAS.get(revision) != "stateless":
            session.peer.era = LEGACY
            self.legacy.assume_initialized(session, revision)
            return
        self.stateless.assume_initialized(session, revision)

    def on_notification(
        self, server: ServerSide, session: Session, method: str, params: dict[str, Any] | None
    ) -> None:
        if self._stateless is not None:
            self._stateless.on_notification(server, session, method, params)
        elif session.peer.era == LEGACY:
            self.legacy.on_notification(server, session, method, params)
        # Else a stateless-era session's, of which StatelessServer takes no notice either.

    def prepare_call(self, server: ServerSide, call: OutgoingCall) -> None:
        if self._stateless is None and call.session.peer.era == LEGACY:
            self.legacy.prepare_call(server, call)
            return
        self.stateless.prepare_call(server, call)
