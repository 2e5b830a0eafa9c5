"""Multi round-trip requests on the server side (``basic/patterns/mrtr.md``): one handler, both eras.

A handler asks the client with ``await context.peer.create_message(...)`` (or ``elicit``,
``list_roots``) whatever the era. In the handshake era that is a request on the session. In the
stateless era a server sends no requests, so the call raises ``InputRequired`` instead (a
``BaseException``: a handler's ``except Exception`` must not swallow it); the route answers the
original request with an ``InputRequiredResult`` asking for it under a deterministic key
(``sampling/createMessage#1``: the method and the call's rank in the handler; or a name of the
handler's, ``context.asking("user_name")``), and the client's retry runs the handler again from
the top. This time the same call, under the same key and with the same params, finds the
client's answer and returns it as the typed result. Calls made at once (in a task group) are
asked for in one round. An answer the client sends without being asked (seeding a first
attempt) counts for whatever the handler asks under its key: the client could give that answer
anyway, so it grants nothing.

Answers of earlier rounds ride in ``requestState``, which the client echoes but must not be
trusted with (the spec's security rules), nor read (the answers may hold what a user typed or a
model wrote): it is sealed with AES-256-GCM under a key derived from the server's secret, so it
is both secret and tamper-evident, bound to the method, the revision, a digest of the request's params (less ``_meta``,
``inputResponses`` and ``requestState``, which differ between attempts) and optionally a
principal, and expires. A state that fails any check is refused with -32602. A handler that
returns its own ``InputRequiredResult`` keeps working: its ``requestState`` is sealed inside
ours and handed back to it, in its params, on the retry.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import os
import secrets
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar, get_args

from mcpbind.generated.names import META_CLIENT_CAPABILITIES as CLIENT_CAPABILITIES
from mcpbind.generated.support import Direction, MCPModel, MethodSpec, RequestOptions
from mcpbind.runtime.core.bindings import Bindings, dump, is_model, validator
from mcpbind.runtime.core.bounded import remember
from mcpbind.runtime.core.capabilities import capability_tree, has_capability
from mcpbind.runtime.core.context import RelatedSender
from mcpbind.runtime.core.errors import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    CapabilityError,
    ClientCapabilityMissing,
    McpError,
)
from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    from mcpbind.runtime.core.context import RequestContext
    from mcpbind.runtime.core.jsonvalue import JsonValue
    from mcpbind.runtime.core.routing import Handler, Route

    from ._sealing import Cipher

__all__ = [
    "INPUT_REQUIRED",
    "NO_PARAMS",
    "STATE_KEY_ENV",
    "ClientCapabilityMissing",
    "InputRequired",
    "InputRounds",
    "RequestStateKeeper",
    "input_result_type",
    "shared_state_key",
    "with_input_rounds",
]

ResultT = TypeVar("ResultT")

#: An attempt's answers before it has any (never changed: ``ask`` makes a dict of its own).
_NO_ANSWERS: Final[dict[str, list[Any]]] = {}
#: The params of a request without any (never changed).
NO_PARAMS: Final[dict[str, Any]] = {}
#: ``_ask_key`` per result class; ``_UNKNOWN``: not looked at yet.
_ask_keys: dict[type, str | None] = {}
_UNKNOWN: Final[Any] = object()
#: Result classes kept in ``_ask_keys`` (all dropped when full).
_MAX_ASK_KEYS: Final = 256

INPUT_REQUIRED: Final = "input_required"
#: Members of the request's params that change between attempts at the same request.
_UNBOUND: Final = frozenset({"_meta", "inputResponses", "requestState"})
#: Marks a state this runtime sealed, and its envelope: ``mcpbind2.<key id>.<nonce+ciphertext>``.
_PREFIX: Final = "mcpbind2."
#: The envelope before encryption (HMAC-signed, readable): refused with its own message.
_SIGNED_PREFIX: Final = "mcpbind1."
#: The version of the payload inside the envelope.
_VERSION: Final = 1
#: HKDF ``info``: the AES key for requestState, and nothing else, comes from a secret.
_KDF_INFO: Final = b"mcpbind requestState AES-256-GCM v2"
_NONCE_BYTES: Final = 12
#: The secret every worker of one deployment shares for ``requestState`` (``python -m
#: mcpbind.runtime.cluster serve`` draws one per cluster unless it is set).
STATE_KEY_ENV: Final = "MCPBIND_STATE_KEY"


class InputRequired(BaseException):
    """Raised by a peer call in the stateless era: the client must answer ``request`` first."""

    def __init__(self, key: str, request: dict[str, Any], digest: str) -> None:
        super().__init__(key)
        self.key = key
        self.request = request
        self.digest = digest


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _digest(value: Any) -> str:
    """A short stable digest of JSON data (sorted keys, so key order does not matter)."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return _b64(hashlib.sha256(canonical.encode("utf-8")).digest()[:18])


def shared_state_key() -> bytes | None:
    """The ``requestState`` key ``MCPBIND_STATE_KEY`` names (the SHA-256 of its text, so any
    secret of 16 characters or more is a full-length key), or None when it is unset."""
    text = os.environ.get(STATE_KEY_ENV)
    if not text:
        return None
    if len(text) < 16:
        raise ValueError(f"{STATE_KEY_ENV} needs at least 16 characters")
    return hashlib.sha256(text.encode("utf-8")).digest()


def _bad_state(why: str) -> McpError:
    return McpError(INVALID_PARAMS, f"Invalid params: requestState {why}")


def _default_key() -> bytes:
    return shared_state_key() or secrets.token_bytes(32)


class RequestStateKeeper:
    """Seals and opens the ``requestState`` of multi round-trip requests.

    A state is encrypted and authenticated with AES-256-GCM: the client can neither read the
    earlier answers it carries nor change them. ``key`` is the secret the AES key is derived
    from (HKDF-SHA256); by default the one ``MCPBIND_STATE_KEY`` names (``shared_state_key``),
    which the cluster launcher shares among its workers, else 32 random bytes, so a state only
    comes back to the process that sealed it: every worker behind a load balancer needs the
    same key. ``previous_keys`` still open states sealed before a key rotation (new states are
    sealed with ``key``; a state names the key id it was sealed with). ``ttl`` (seconds, None:
    never) bounds how long a state is accepted; ``principal`` names the authenticated caller
    of a request (e.g. from ``context.transport_context``), so a state sealed for one is refused
    to another.
    """

    def __init__(
        self,
        key: bytes | str | None = None,
        *,
        previous_keys: Sequence[bytes | str] = (),
        ttl: float | None = 900.0,
        principal: Callable[[RequestContext], str | None] | None = None,
    ) -> None:
        secrets_ = [
            k.encode("utf-8") if isinstance(k, str) else bytes(k)
            for k in (key if key is not None else _default_key(), *previous_keys)
        ]
        if any(len(k) < 16 for k in secrets_):
            raise ValueError("a requestState key needs at least 16 bytes")
        self._secrets = secrets_
        self.ttl = ttl
        self.principal = principal

    @functools.cached_property
    def _ciphers(self) -> tuple[tuple[str, Cipher], dict[str, Cipher]]:
        """The sealing key's id and cipher, and every key's cipher by id (derived on first use)."""
        # Start-up: cryptography is imported by the first state sealed or opened, not by
        # every server (a handshake-era session never needs it).
        from ._sealing import Cipher

        derived = [(_b64(c.key_id), c) for c in (Cipher(s, _KDF_INFO) for s in self._secrets)]
        return derived[0], dict(reversed(derived))

    def seal(self, payload: dict[str, Any]) -> str:
        """The opaque token for ``payload`` (JSON data), stamped with its expiry."""
        if self.ttl is not None:
            payload = {**payload, "exp": int(time.time() + self.ttl) + 1}
        plain = json.dumps(payload, separators=(",", ":")).encode("utf-8")
        (kid, cipher), _ = self._ciphers
        nonce = secrets.token_bytes(_NONCE_BYTES)
        # The prefix and key id are authenticated too: a state cannot be moved to another key.
        sealed = cipher.encrypt(nonce, plain, f"{_PREFIX}{kid}".encode("ascii"))
        return f"{_PREFIX}{kid}.{_b64(nonce + sealed)}"

    def open(self, token: Any) -> dict[str, Any]:
        """The payload of a token this keeper sealed; -32602 for anything else or expired."""
        if type(token) is str and token.startswith(_SIGNED_PREFIX):
            raise _bad_state(
                "was sealed in an older format this server no longer accepts; "
                "start the request again without it"
            )
        if type(token) is not str or not token.startswith(_PREFIX):
            raise _bad_state("was not issued by this server")
        kid, _, body = token[len(_PREFIX) :].partition(".")
        found = self._ciphers[1].get(kid)
        try:
            blob = _unb64(body)
        except (binascii.Error, ValueError):
            raise _bad_state("failed its integrity check") from None
        if found is None or len(blob) <= _NONCE_BYTES:
            raise _bad_state("failed its integrity check")
        plain = found.decrypt(
            blob[:_NONCE_BYTES], blob[_NONCE_BYTES:], f"{_PREFIX}{kid}".encode("ascii")
        )
        if plain is None:
            raise _bad_state("failed its integrity check")
        try:
            payload: JsonValue = json.loads(plain)
        except ValueError:
            raise _bad_state("failed its integrity check") from None
        if type(payload) is not dict or payload.get("v") != _VERSION:
            raise _bad_state("has an unknown format")
        expires: JsonValue = payload.get("exp")
        if expires is not None and (type(expires) is not int or time.time() > expires):
            raise _bad_state("has expired; start the request again without it")
        return payload


@functools.cache
def input_result_type(spec: MethodSpec[Any, Any]) -> Any:
    """The ``InputRequiredResult`` class ``spec``'s result may be, or None if it may not be one
    (only ``tools/call``, ``prompts/get`` and ``resources/read`` may, by the generated tables)."""
    members = get_args(spec.result_type) or (spec.result_type,)
    return next(
        (m for m in members if isinstance(m, type) and m.__name__ == "InputRequiredResult"), None
    )


class InputRounds:
    """One attempt at a request that may ask the client for input: what it already has, what
    it asks next. Built per attempt by ``with_input_rounds``, whose route runs ``run``;
    ``context.peer`` asks through it.

    Most attempts ask nothing: what only asking needs has a class-level default (no
    ``__slots__``), so making one sets six attributes (measured under callgrind: the wrapper
    cost a 2026-07-28 echo call 11.4k instructions, bench/README.md)."""

    #: key -> [digest of the request asked, the client's raw answer] (``_NO_ANSWERS``: none yet)
    answers: dict[str, list[Any]]
    handler_state: Any = None
    _binding: dict[str, Any] | None = None
    _count = 0
    _capabilities: dict[str, Any] | None = None
    _asked: dict[str, Any] | None = None
    _kept: set[str] | None = None
    _used: set[str] | None = None

    def __init__(
        self,
        keeper: RequestStateKeeper,
        served: MethodSpec[Any, Any],
        bindings: Bindings,
        raw: dict[str, Any],
        handler: Handler | None = None,
    ) -> None:
        self.keeper = keeper
        self.served = served
        self.bindings = bindings
        self._raw = raw
        self._handler = handler
        self.answers = _NO_ANSWERS

    async def run(self, params: Any, context: RequestContext) -> Any:
        """The route's handler: the wrapped handler's attempt, its questions answered with an
        ``InputRequiredResult`` (``with_input_rounds``)."""
        handler = self._handler
        assert handler is not None
        if "requestState" in self._raw:  # a first round has no state to verify
            self.begin(context)
            context.rounds = self
            if isinstance(params, BaseModel) and "requestState" in type(params).model_fields:
                params = params.model_copy(update={"requestState": self.handler_state})
        else:
            context.rounds = self
        try:
            result = await handler(params, context)
        except InputRequired as need:
            return self.input_required(context, [need], None)
        except BaseExceptionGroup as group:
            needs, rest = group.split(InputRequired)
            if needs is None:
                raise
            if rest is not None:
                raise rest from None  # the handler's own failures, without our signals
            return self.input_required(context, _leaves(needs), None)
        except ClientCapabilityMissing as exc:
            shape = self.bindings.module.methods.CAPABILITIES.get("ClientCapabilities")
            raise McpError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: {exc}",
                {"requiredCapabilities": capability_tree([exc.capability], shape)},
            ) from exc
        data = _handler_asked(result)
        if data is not None and (self.answers or data.get("requestState") is not None):
            return self.input_required(context, [], data)
        return result

    @property
    def capabilities(self) -> dict[str, Any]:
        """The client's capabilities, from the request's ``_meta``."""
        if self._capabilities is None:
            meta: JsonValue = self._raw.get("_meta")
            found: JsonValue = meta.get(CLIENT_CAPABILITIES) if type(meta) is dict else None
            self._capabilities = found if type(found) is dict else {}
        return self._capabilities

    def sender(self, context: RequestContext, key: str | None = None) -> InputSender:
        """What ``context.peer`` sends through during this attempt (``key``: see ``ask``)."""
        return InputSender(context, self, key)

    def binding(self, context: RequestContext) -> dict[str, Any]:
        """What a state is bound to: method, revision, params digest and principal."""
        if self._binding is None:
            principal = self.keeper.principal(context) if self.keeper.principal else None
            params = {k: v for k, v in self._raw.items() if k not in _UNBOUND}
            self._binding = {
                "m": self.served.method,
                "r": self.bindings.revision,
                "p": _digest(params),
                "u": principal,
            }
        return self._binding

    def begin(self, context: RequestContext) -> None:
        """Verify the echoed state, if any, and take in the earlier answers it carries."""
        token = self._raw.get("requestState")
        if token is None:
            return
        state = self.keeper.open(token)
        binding = self.binding(context)
        for field, label in (("m", "method"), ("r", "revision"), ("p", "params"), ("u", "caller")):
            if state.get(field) != binding[field]:
                raise _bad_state(f"belongs to another request (its {label} differs)")
        answers: JsonValue = state.get("a")
        asked: JsonValue = state.get("q")
        if type(answers) is not dict or type(asked) is not dict:
            raise _bad_state("has an unknown format")
        self.answers = answers
        self._kept = set(answers)
        self.handler_state = state.get("h")
        self._asked = asked

    def _response(self, key: str) -> list[Any] | None:
        """The answer under ``key``: from this retry's ``inputResponses`` (bound to what the
        state says was asked under it, if anything), else from an earlier round."""
        responses = self._raw.get("inputResponses")
        if type(responses) is dict and key in responses:
            return [self._asked.get(key) if self._asked else None, responses[key]]
        return self.answers.get(key)

    def ask(
        self,
        spec: MethodSpec[Any, Any],
        params: MCPModel | dict[str, Any] | None,
        key: str | None = None,
    ) -> Any:
        """The client's answer to this call if a retry carries it; else raise ``InputRequired``.

        ``key`` names the input request (default: ``method#rank``, its rank among the calls).
        An answer counts if it was given for the same request: one the client sends unasked
        (or seeds a first attempt with) counts for whatever the handler asks under its key.
        """
        method = spec.method
        if method not in self.bindings.methods or Direction.SERVER_TO_CLIENT not in spec.directions:
            raise CapabilityError(
                f"{method!r} cannot be sent this way under revision {self.bindings.revision}"
            )
        needed = spec.capabilities.get(Direction.SERVER_TO_CLIENT)
        if needed is not None and not has_capability(self.capabilities, needed):
            raise ClientCapabilityMissing(
                f"the client did not advertise the {needed!r} capability, which {method!r} "
                "needs; not asked",
                needed,
            )
        self._count += 1
        if key is None:
            key = f"{method}#{self._count}"
        used = self._used = self._used or set()
        if key in used:
            raise ValueError(f"input request key {key!r} used twice in one request")
        used.add(key)
        request: dict[str, Any] = {"method": method}
        body = dump(params)
        if body is not None:
            request["params"] = body
        digest = _digest(request)
        answer = self._response(key)
        if answer is not None and answer[0] in (None, digest):
            if self.answers is _NO_ANSWERS:
                self.answers = {}
            self.answers[key] = [digest, answer[1]]
            self._kept = self._kept or set()
            self._kept.add(key)
            try:
                return validator(spec.result_type)(answer[1])
            except ValidationError as exc:
                errors = exc.errors(include_url=False, include_context=False, include_input=False)
                raise McpError(
                    INVALID_PARAMS,
                    f"Invalid params: inputResponses[{key!r}] is not a {method} result",
                    errors,
                ) from None
        raise InputRequired(key, request, digest)

    def input_required(
        self, context: RequestContext, needs: Sequence[InputRequired], manual: dict[str, Any] | None
    ) -> Any:
        """The ``InputRequiredResult`` asking for ``needs`` (plus what a handler asked itself)."""
        data: dict[str, Any] = dict(manual) if manual else {"resultType": INPUT_REQUIRED}
        requests = dict(data.get("inputRequests") or {})
        asked = {}
        for need in needs:
            requests[need.key] = need.request
            asked[need.key] = need.digest
        own_state = data.pop("requestState", None)
        kept = self._kept or ()
        answers = {key: value for key, value in self.answers.items() if key in kept}
        if answers or asked or own_state is not None:
            payload = {"v": _VERSION, **self.binding(context), "a": answers, "q": asked}
            if own_state is not None:
                payload["h"] = own_state
            data["requestState"] = self.keeper.seal(payload)
        if requests:
            data["inputRequests"] = requests
        return validator(input_result_type(self.served))(data)


class InputSender(RelatedSender):
    """The ``RequestSender`` of ``context.peer`` in the stateless era: requests become input
    requests of the round; notifications still go out, tagged with the request."""

    __slots__ = ("_key", "_rounds")

    def __init__(self, context: RequestContext, rounds: InputRounds, key: str | None) -> None:
        super().__init__(context.session, context.request_id)
        self._rounds = rounds
        self._key = key

    async def send_request(
        self,
        spec: MethodSpec[Any, ResultT],
        params: MCPModel | None,
        options: RequestOptions | None = None,
    ) -> ResultT:
        return self._rounds.ask(spec, params, self._key)  # type: ignore[no-any-return]


def _as_data(result: Any) -> Any:
    return dump(result) if isinstance(result, BaseModel) else result


def _ask_key(cls: type) -> str | None:
    """Where a generated model keeps what it dumps as ``resultType``: the field's attribute,
    or "" (its extras, if anywhere); None for any other class, which is dumped to be read.
    Kept per class in ``_ask_keys`` (a dict's ``get``: ``functools.cache`` and the
    ``issubclass`` through pydantic's ``ABCMeta`` were 3.4k instructions a call)."""
    found: str | None = None
    if is_model(cls) and issubclass(cls, MCPModel):
        found = ""
        for name, info in cls.model_fields.items():
            if (info.serialization_alias or info.alias or name) == "resultType":
                found = name
                break
    return remember(_ask_keys, cls, found, _MAX_ASK_KEYS)


def _handler_asked(result: Any) -> Any:
    """A handler's result as data when it may be an ``InputRequiredResult`` of its own, else
    None. A generated model's ``resultType`` is read where it lives: dumping every result to
    read one member was a serialisation per request (the result is dumped once more to answer)."""
    instance: object = result  # type() of an Any is type[Unknown] to pyright
    cls: Any = type(instance)
    key = _ask_keys.get(cls, _UNKNOWN)
    if key is _UNKNOWN:
        key = _ask_key(cls)
    if key is not None:
        if key:
            said = getattr(result, key)
        else:
            extra: dict[str, Any] = result.__pydantic_extra__ or {}
            said = extra.get("resultType")
        if (type(said) is str and said != INPUT_REQUIRED) or said is None:
            return None
    data: JsonValue = _as_data(result)
    return data if type(data) is dict and data.get("resultType") == INPUT_REQUIRED else None


def with_input_rounds(
    route: Route,
    served: MethodSpec[Any, Any],
    bindings: Bindings,
    raw: dict[str, Any] | None,
    keeper: RequestStateKeeper,
) -> None:
    """Make ``route`` (of a method whose result may be an ``InputRequiredResult``) run its
    handler in rounds: peer calls become input requests, echoed state is verified first."""
    route.handler = InputRounds(keeper, served, bindings, raw or NO_PARAMS, route.handler).run


def _leaves(group: BaseExceptionGroup[InputRequired]) -> list[InputRequired]:
    out: list[InputRequired] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out.extend(_leaves(exc))
        else:
            out.append(exc)
    return out
