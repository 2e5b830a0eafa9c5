"""The MCP server as an OAuth 2.1 resource server: who may call, and how a client finds out.

``ResourceServer`` is handed to ``StreamableHTTPServer(auth=...)`` (or ``LegacySSEServer``),
whose small hooks call it: ``serve_metadata`` answers the Protected Resource Metadata
requests (RFC 9728), ``admit`` checks every other request's bearer token and either puts the
verified ``AccessToken`` into the ASGI scope (handlers read it as ``context.auth``) or answers
the refusal itself, and ``bind``/``owns`` tie a handshake-era session to the identity that
opened it (a session id is not a credential: another identity presenting it gets 404).

Refusals (authorization.md, "Error Handling"; RFC 6750 3.1): no token, or another scheme,
401 with a ``WWW-Authenticate`` challenge naming ``resource_metadata`` and the required
scopes; a token that fails verification or was issued for another resource (audience, RFC
8707), 401 ``invalid_token``; a valid token without the required scopes, 403
``insufficient_scope``; a malformed ``Authorization`` header, 400 ``invalid_request``; a
verifier that cannot reach its keys or introspection endpoint, 503. Bodies are JSON-RPC
errors like the transport's other refusals, with the OAuth error in ``data``.

DPoP (RFC 9449, SEP-1932), with ``dpop=DPoPVerifier(...)``: a token presented as
``Authorization: DPoP`` needs one valid proof (``DPoPVerifier.check``) whose key is the one the
token is bound to (``cnf.jkt``); a bad proof gets 401 ``invalid_dpop_proof``, a proof without
the required nonce 401 ``use_dpop_nonce`` with a fresh ``DPoP-Nonce``, a key that is not the
token's 401 ``invalid_token``; with ``require_nonce``, a request admitted with a proof gets a
fresh ``DPoP-Nonce`` on its response too (RFC 9449 8.2), so the client renews its nonce before
it lapses; a proof whose replay cache cannot be reached (Redis down) 503,
never taken unchecked. A DPoP-bound token presented as ``Bearer`` is refused
(``invalid_token``): without the proof it is just a stolen token. With ``dpop_required``
bearer tokens are not taken at all. Challenges then name the ``DPoP`` scheme and its ``algs``.
"""

from __future__ import annotations

import hmac
import logging
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, cast
from urllib.parse import urlsplit, urlunsplit

from mcpbind.runtime.core import jsonrpc as rpc
from mcpbind.runtime.core.logsafe import printable
from mcpbind.runtime.transports.http.asgi import CONNECTION_ERROR, error, respond
from mcpbind.runtime.transports.http.common import (
    AUTH_HEADERS_KEY,
    AUTH_RECHECK_KEY,
    AUTH_SCOPE_KEY,
    FORWARDED_KEY,
    JSON,
)
from starlette.types import Scope, Send

from ._bearer import Credentials, bearer_token, challenge, dpop_proofs, valid_scope_token
from ._dpop import (
    INVALID_DPOP_PROOF,
    USE_DPOP_NONCE,
    DPoPError,
    DPoPProof,
    DPoPUnavailable,
    DPoPVerifier,
)
from ._token import AccessToken, TokenError, TokenVerifier, VerifierUnavailable

__all__ = ["WELL_KNOWN", "ResourceServer", "canonical_resource"]

logger = logging.getLogger("mcpbind.runtime.auth")

#: RFC 9728 3: the well-known suffix of Protected Resource Metadata.
WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
#: Where ``admit`` notes that a request came with the DPoP scheme (for its later refusals).
_DPOP_KEY: Final = "mcpbind.auth.dpop"
NONCE_HEADER: Final = "dpop-nonce"


def bound_key(token: AccessToken) -> str | None:
    """The JWK thumbprint a token is bound to (``cnf.jkt``, RFC 9449 6), if any."""
    confirmation: object = token.claims.get("cnf")
    cnf = cast("dict[str, object]", confirmation) if isinstance(confirmation, dict) else None
    jkt = cnf.get("jkt") if cnf is not None else None
    return jkt if isinstance(jkt, str) else None


def canonical_resource(url: str) -> str:
    """A resource URI in the canonical form of authorization.md ("Canonical Server URI"):
    scheme and host lower-cased, no fragment, no trailing slash. Raises ``ValueError`` for a
    URI that cannot identify a resource (relative, fragment, not http(s))."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError(f"a resource must be an absolute http(s) URI, not {url!r}")
    if parts.fragment or url.endswith("#"):
        raise ValueError(f"a resource URI has no fragment: {url!r}")
    return urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"), parts.query, "")
    )


async def _unavailable(send: Send, why: str) -> None:
    """503 with ``Retry-After``: the request could not be checked now, and may be retried."""
    await error(send, 503, CONNECTION_ERROR, f"Service Unavailable: {why}", **{"retry-after": "5"})


def _same_resource(value: str, accepted: frozenset[str]) -> bool:
    try:
        return canonical_resource(value) in accepted
    except ValueError:
        return False


class ResourceServer:
    """Protects an MCP HTTP endpoint with bearer tokens checked by ``verifier``.

    ``resource`` is the endpoint's canonical URL (``https://mcp.example.com/mcp``): tokens must
    name it in their audience (``audiences`` may add other accepted values), and it is the
    ``resource`` of the metadata document, served at ``/.well-known/oauth-protected-resource``
    plus the resource's path (the URL given to clients in ``resource_metadata``) and at the
    bare well-known path. ``authorization_servers`` are the issuers clients may get tokens
    from (at least one). ``required_scopes`` must all be granted for any request;
    ``implied_scopes`` maps a broad scope to the narrower ones it includes (``{"files:write":
    ["files:read"]}``), which the check honours (2026-07-28: servers account for scope
    hierarchies). ``operation_scopes(method, params)`` may name more scopes one request needs
    (a tool that writes): a token without them gets 403 ``insufficient_scope`` naming all the
    scopes that operation needs, so the client can step up. ``scopes_supported`` (default:
    the required ones) and ``metadata`` (any other RFC 9728 fields, e.g. ``resource_name``) go
    into the document.

    An open response (an event stream) ends when its token expires; with ``recheck_interval``
    (seconds) its token is also verified again that often, and the response ends when it no
    longer passes (revoked, as an introspection verifier learns). A verifier that cannot be
    reached then does not end it.

    ``dpop`` (a ``DPoPVerifier``) takes DPoP-bound tokens with their proofs besides bearer
    tokens; ``dpop_required`` takes nothing else (the metadata then says
    ``dpop_bound_access_tokens_required``).
    """

    def __init__(
        self,
        verifier: TokenVerifier,
        *,
        resource: str,
        authorization_servers: Sequence[str],
        required_scopes: Sequence[str] = (),
        scopes_supported: Sequence[str] | None = None,
        implied_scopes: Mapping[str, Iterable[str]] | None = None,
        audiences: Iterable[str] = (),
        operation_scopes: Callable[[str, Any], Iterable[str]] | None = None,
        metadata: Mapping[str, Any] | None = None,
        recheck_interval: float | None = None,
        dpop: DPoPVerifier | None = None,
        dpop_required: bool = False,
    ) -> None:
        if dpop_required and dpop is None:
            raise ValueError("dpop_required needs a DPoPVerifier (dpop=...)")
        if not authorization_servers:
            raise ValueError("a protected resource names at least one authorization server")
        for scope in (*required_scopes, *(scopes_supported or ())):
            if not valid_scope_token(scope):
                raise ValueError(f"not a valid OAuth scope: {scope!r}")
        self.verifier = verifier
        self.resource = canonical_resource(resource)
        self.authorization_servers = list(authorization_servers)
        self.required_scopes = tuple(required_scopes)
        self.scopes_supported = (
            list(scopes_supported) if scopes_supported is not None else list(required_scopes)
        )
        self.implied_scopes = {k: tuple(v) for k, v in (implied_scopes or {}).items()}
        self.operation_scopes = operation_scopes
        self.audiences = frozenset({self.resource, *(canonical_resource(a) for a in audiences)})
        parts = urlsplit(self.resource)
        origin = f"{parts.scheme}://{parts.netloc}"
        #: Where the metadata is served: the path-suffixed form first (RFC 9728 3.1).
        self.metadata_paths = tuple(dict.fromkeys((WELL_KNOWN + parts.path, WELL_KNOWN)))
        #: The URL every challenge names in ``resource_metadata``.
        self.resource_metadata_url = origin + self.metadata_paths[0]
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            document["scopes_supported"] = self.scopes_supported
        self.dpop = dpop
        self.dpop_required = dpop_required
        self._origin = origin
        if dpop is not None:
            document["dpop_signing_alg_values_supported"] = list(dpop.algorithms)
            if dpop_required:
                document["dpop_bound_access_tokens_required"] = True
        document.update(metadata or {})
        self.document = document
        self._body = rpc.encode(document)
        self._owners: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self.recheck_interval = recheck_interval

    # -- the metadata document ----------------------------------------------------------

    async def serve_metadata(self, scope: Scope, send: Send) -> bool:
        """Answer a request for the metadata document (True), or leave it alone (False)."""
        path = scope["path"]
        if not path.startswith(WELL_KNOWN) or path.rstrip("/") not in self.metadata_paths:
            return False
        cors = {"access-control-allow-origin": "*"}
        method = scope["method"]
        if method == "GET":
            await respond(send, 200, self._body, JSON, {**cors, "cache-control": "max-age=300"})
        elif method == "OPTIONS":
            allow = {"access-control-allow-methods": "GET, OPTIONS"}
            await respond(send, 204, headers={**cors, **allow})
        else:
            await error(send, 405, CONNECTION_ERROR, "Method not allowed", allow="GET")
        return True

    # -- admission ----------------------------------------------------------------------

    def granted(self, token: AccessToken) -> frozenset[str]:
        """The token's scopes with everything they imply."""
        found = set(token.scopes)
        todo = list(found)
        while todo:
            for narrower in self.implied_scopes.get(todo.pop(), ()):
                if narrower not in found:
                    found.add(narrower)
                    todo.append(narrower)
        return frozenset(found)

    async def admit(self, scope: Scope, send: Send) -> bool:
        """Check the request's token (and DPoP proof): True with ``scope[AUTH_SCOPE_KEY]`` set
        to the verified ``AccessToken``, or False once the refusal has been sent."""
        credentials = bearer_token(scope, dpop=self.dpop is not None)
        scope[_DPOP_KEY] = credentials.dpop
        if credentials.problem is not None:
            await self._refuse(
                scope,
                send,
                400,
                "invalid_request",
                f"malformed Authorization header ({credentials.problem})",
            )
            return False
        if credentials.token is None or (self.dpop_required and not credentials.dpop):
            taken = "a DPoP-bound OAuth token" if self.dpop_required else "an OAuth bearer token"
            shown = credentials.scheme or ("Bearer" if credentials.token else None)
            why = (
                f"this server takes {taken}, not {shown}"
                if shown is not None
                else f"this server needs {taken}"
            )
            await self._refuse(scope, send, 401, None, why)
            return False
        proof = None
        if credentials.dpop:
            try:
                proof = await self._check_proof(scope, credentials)
            except DPoPError as exc:
                await self._refuse(scope, send, 401, exc.error, exc.description)
                return False
            except DPoPUnavailable as exc:
                logger.warning("a DPoP proof could not be checked: %s", exc)
                await _unavailable(send, f"the DPoP proof could not be checked ({exc})")
                return False
        try:
            token = await self.verifier.verify(credentials.token)
        except TokenError as exc:
            await self._refuse(scope, send, 401, "invalid_token", exc.description)
            return False
        except VerifierUnavailable as exc:
            await _unavailable(send, f"the token could not be checked ({exc})")
            return False
        except Exception:
            logger.exception("the token verifier failed")
            await self._refuse(scope, send, 401, "invalid_token", "the token could not be verified")
            return False
        if token is None:
            await self._refuse(scope, send, 401, "invalid_token", "the token is not valid")
            return False
        refused = self._binding_refusal(token, proof)
        if refused is not None:
            await self._refuse(scope, send, 401, "invalid_token", refused)
            return False
        audiences = self.audiences
        if not any(a in audiences or _same_resource(a, audiences) for a in token.audience):
            logger.info(
                "refused a token for audience %s (this resource: %s)",
                printable(", ".join(token.audience) or "(none)"),
                self.resource,
            )
            await self._refuse(
                scope, send, 401, "invalid_token", f"the token was not issued for {self.resource}"
            )
            return False
        missing = [s for s in self.required_scopes if s not in self.granted(token)]
        if missing:
            await self._refuse(
                scope,
                send,
                403,
                "insufficient_scope",
                f"the token lacks the scope {' '.join(missing)}",
            )
            return False
        scope[AUTH_SCOPE_KEY] = token
        if proof is not None and self.dpop is not None and self.dpop.require_nonce:
            # RFC 9449 8.2: a fresh nonce on success, so the client's next proofs carry one
            # before the current one lapses (no use_dpop_nonce round trip).
            scope[AUTH_HEADERS_KEY] = [(NONCE_HEADER.encode(), self.dpop.new_nonce().encode())]
        if self.recheck_interval is not None:
            raw = credentials.token
            scope[AUTH_RECHECK_KEY] = (self.recheck_interval, lambda: self._still_valid(raw))
        return True

    async def _check_proof(self, scope: Scope, credentials: Credentials) -> DPoPProof:
        """The request's one DPoP proof, checked against the request and the token."""
        assert self.dpop is not None and credentials.token is not None
        proofs = dpop_proofs(scope)
        if len(proofs) != 1:
            why = "no DPoP proof" if not proofs else "more than one DPoP proof"
            raise DPoPError(INVALID_DPOP_PROOF, f"the request has {why}")
        return await self.dpop.check(
            proofs[0],
            method=scope["method"],
            url=self._request_uris(scope),
            access_token=credentials.token,
            replay_checked=bool(scope.get(FORWARDED_KEY)),
        )

    def _request_uris(self, scope: Scope) -> list[str]:
        """The URIs a request may be known by: as it reached this server, and under the
        resource's public origin (behind a proxy that terminates TLS)."""
        path = scope.get("path", "/")
        host = next((v for n, v in scope["headers"] if n == b"host"), None)
        uris = [f"{self._origin}{path}"]
        if host is not None:
            uris.append(f"{scope.get('scheme', 'http')}://{host.decode('latin-1')}{path}")
        return uris

    @staticmethod
    def _binding_refusal(token: AccessToken, proof: DPoPProof | None) -> str | None:
        """Why the token may not be used with (or without) this proof, or None."""
        jkt = bound_key(token)
        if proof is None:
            if jkt is not None:
                return "the token is bound to a DPoP key: present it with the DPoP scheme"
            return None
        if jkt is None:
            return "the token is not bound to a DPoP key: present it with the Bearer scheme"
        if not hmac.compare_digest(jkt, proof.jkt):
            return "invalid DPoP key binding: the proof is signed with another key"
        return None

    async def _still_valid(self, raw: str) -> bool:
        """Whether a token admitted earlier still verifies (unreachable verifier: yes)."""
        try:
            return await self.verifier.verify(raw) is not None
        except TokenError:
            return False
        except Exception as exc:
            logger.warning("could not re-check a token (%s): the response goes on", exc)
            return True

    def operation_refusal(
        self, scope: Scope, messages: Sequence[Any]
    ) -> tuple[int, bytes, dict[str, str]] | None:
        """The refusal (status, body, headers) of POSTed requests whose operations need scopes
        the token lacks (``operation_scopes``), or ``None`` to let them through."""
        needs = self.operation_scopes
        token = scope.get(AUTH_SCOPE_KEY)
        if needs is None or not isinstance(token, AccessToken):
            return None
        wanted = dict.fromkeys(self.required_scopes)
        try:
            for message in messages:
                if type(message) is not dict:
                    continue
                body = cast("dict[str, Any]", message)
                method = body.get("method")
                if type(method) is str:
                    wanted.update(dict.fromkeys(needs(method, body.get("params"))))
        except Exception:
            logger.exception("operation_scopes failed")
            why = "Bad Request: the scopes this request needs are unknown"
            return 400, rpc.encode(rpc.error_response(None, CONNECTION_ERROR, why)), {}
        granted = self.granted(token)
        missing = [s for s in wanted if s not in granted]
        if not missing:
            return None
        why = f"this operation needs the scope {' '.join(missing)}"
        dpop = scope.get(_DPOP_KEY) is True
        return self._refusal(403, "insufficient_scope", why, list(wanted), dpop=dpop)

    async def admit_operations(self, scope: Scope, send: Send, messages: Sequence[Any]) -> bool:
        """``operation_refusal`` as a hook: True, or False once the refusal has been sent."""
        refusal = self.operation_refusal(scope, messages)
        if refusal is None:
            return True
        status, body, headers = refusal
        await respond(send, status, body, JSON, headers)
        return False

    def _refusal(
        self,
        status: int,
        oauth: str | None,
        why: str,
        scopes: Sequence[str] | None = None,
        dpop: bool = False,
    ) -> tuple[int, bytes, dict[str, str]]:
        needed = self.required_scopes if scopes is None else scopes
        headers: dict[str, str] = {}
        challenges: list[str] = []
        if not self.dpop_required and not dpop:
            challenges.append(challenge(self.resource_metadata_url, needed, oauth, why))
        if self.dpop is not None:
            # A request that came with DPoP gets its error in the DPoP challenge; one without
            # a token learns that DPoP is taken, and with which algorithms (RFC 9449 7.1).
            dpop_error = oauth if dpop or self.dpop_required else None
            challenges.append(
                challenge(
                    self.resource_metadata_url,
                    needed,
                    dpop_error,
                    why if dpop_error else None,
                    scheme="DPoP",
                    algs=self.dpop.algs,
                )
            )
            if oauth == USE_DPOP_NONCE:
                headers[NONCE_HEADER] = self.dpop.new_nonce()
        headers["www-authenticate"] = ", ".join(challenges)
        title = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden"}[status]
        data = {"error": oauth, "error_description": why} if oauth is not None else None
        body = rpc.encode(rpc.error_response(None, CONNECTION_ERROR, f"{title}: {why}", data))
        return status, body, headers

    async def _refuse(
        self, scope: Scope, send: Send, status: int, oauth: str | None, why: str
    ) -> None:
        dpop = scope.get(_DPOP_KEY) is True
        _, body, headers = self._refusal(status, oauth, why, dpop=dpop)
        await respond(send, status, body, JSON, headers)

    # -- sessions bound to identities ---------------------------------------------------

    def bind(self, session: object, scope: Scope) -> None:
        """Record that the identity admitted with ``scope`` opened ``session``."""
        token = scope.get(AUTH_SCOPE_KEY)
        if isinstance(token, AccessToken):
            self._owners[session] = token.principal

    def owns(self, session: object, scope: Scope) -> bool:
        """Whether the request's identity is the one that opened ``session``."""
        token = scope.get(AUTH_SCOPE_KEY)
        owner = self._owners.get(session)
        return owner is None or (isinstance(token, AccessToken) and token.principal == owner)
