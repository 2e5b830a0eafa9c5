"""``Context``: what a tool, resource or prompt function may ask for by annotating a parameter.

One object for both protocol eras: ``report_progress`` and the log methods send notifications
tied to the request; ``elicit``, ``sample`` and ``list_roots`` ask the client through the
runtime's ``context.peer``, a request in the handshake era and an input-required round trip in
the stateless one. In the stateless era a function that asks the client is run again from the
top when the client answers (the answers it already has come back at once), so work it does
before asking is done again: ask first, act after. What asking needs (the elicitation schema,
the sampling request, ``ElicitationResult``) is in ``_asking.py``, loaded by the first question.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal

from mcpbind.generated.names import META_LOG_LEVEL, NOTIFICATIONS_MESSAGE
from mcpbind.runtime.core.bindings import Bindings, validator
from mcpbind.runtime.core.session import RequestContext, Session
from pydantic import BaseModel
from typing_extensions import TypeVar

if TYPE_CHECKING:
    from mcpbind.runtime.auth.server import AccessToken

    from ._app import App
    from ._asking import ElicitationResult

__all__ = ["LOG_LEVELS", "Context"]

ModelT = TypeVar("ModelT", bound=BaseModel)
#: What the app's lifespan yields: ``ctx: Context[AppState]`` types ``ctx.lifespan_context``.
LifespanT = TypeVar("LifespanT", covariant=True, default=Any)

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


class Context(Generic[LifespanT]):
    """The request being handled, and ways to talk back to its client (both eras).

    ``revision`` is the protocol revision of the request; ``request_context`` the runtime's
    ``RequestContext`` (``peer``, ``session``, ``meta``...), for anything not offered here.
    The type parameter is what the app's lifespan yields (``lifespan_context``).
    """

    def __init__(
        self, app: App[Any], request_context: RequestContext[Any, Any], revision: str
    ) -> None:
        self.app = app
        self.request_context: RequestContext[Any, LifespanT] = request_context
        self.revision = revision

    @property
    def lifespan_context(self) -> LifespanT:
        """What the app's lifespan yielded (``App(..., lifespan=...)``); None without one."""
        return self.request_context.lifespan_context

    @property
    def request_id(self) -> int | str:
        return self.request_context.request_id

    @property
    def session(self) -> Session:
        return self.request_context.session

    @property
    def auth(self) -> AccessToken | None:
        """The caller's verified OAuth access token (subject, client, scopes) when the app is
        served over HTTP behind a ``ResourceServer`` (``app.http_app(auth=...)``); else None."""
        return self.request_context.auth

    @property
    def client_info(self) -> Any:
        """What the client said of itself (its ``Implementation``), if it did."""
        return self.session.peer.info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.session.peer.capabilities

    @property
    def stateless(self) -> bool:
        """Whether the request is of the stateless era (2026-07-28 and later)."""
        return Bindings.load(self.revision, self.app.server.local).era == "stateless"

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """``notifications/progress``, if the caller asked for progress; a no-op otherwise."""
        await self.request_context.report_progress(progress, total, message)

    # -- logging ----------------------------------------------------------------------------

    def _log_threshold(self) -> str | None:
        if self.stateless:
            meta = self.request_context.meta or {}
            level = meta.get(META_LOG_LEVEL)
            return level if level in LOG_LEVELS else None
        return self.app.log_level(self.session)

    async def log(self, level: LogLevel, data: Any, *, logger: str | None = None) -> None:
        """``notifications/message`` to the client, if it asked for messages of ``level``:
        by ``logging/setLevel`` in the handshake era (all levels until it does), by the
        request's ``_meta`` level in the stateless era (none unless it asks)."""
        threshold = self._log_threshold()
        if threshold is None or LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
            return
        bindings = Bindings.load(self.revision, self.app.server.local)
        spec = bindings.notifications[NOTIFICATIONS_MESSAGE]
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.request_context.send_notification(spec, validator(spec.params_type)(params))

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("error", data, logger=logger)

    # -- asking the client (``_asking``, loaded by the first question) ----------------------

    async def elicit(
        self, message: str, schema: type[ModelT], *, key: str | None = None
    ) -> ElicitationResult[ModelT]:
        """Ask the user for data shaped like ``schema`` (a model of primitive fields).

        ``key`` names the question in the stateless era (default: its rank in the call).
        """
        from ._asking import elicit

        peer = self.request_context.asking(key) if key else self.request_context.peer
        return await elicit(peer, self.revision, message, schema)

    async def sample(
        self,
        messages: str | Sequence[Any],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: Any = None,
        key: str | None = None,
    ) -> Any:
        """Ask the client's LLM (``sampling/createMessage``); returns its result (``.content``,
        ``.model``...). ``messages`` is a user prompt, or a list of strings (user turns) and
        ``SamplingMessage`` objects or dicts."""
        from ._asking import sampling_params

        peer = self.request_context.asking(key) if key else self.request_context.peer
        params = sampling_params(
            messages, max_tokens, system_prompt, temperature, stop_sequences, model_preferences
        )
        return await peer.create_message(params)

    async def list_roots(self, *, key: str | None = None) -> list[Any]:
        """The client's roots (``roots/list``)."""
        peer = self.request_context.asking(key) if key else self.request_context.peer
        result = await peer.list_roots()
        return list(result.roots)
