"""Checking DPoP proofs (RFC 9449 4.3, as SEP-1932 profiles it for MCP) on the resource server.

``DPoPVerifier.check`` runs the RFC's checks on the ``DPoP`` header of one request: a compact
JWS of ``typ`` ``dpop+jwt``, signed with an allowed asymmetric algorithm by the public key in its
``jwk`` header (never a private one), whose claims bind it to this request (``htm``, ``htu``
without query and fragment), to the access token presented with it (``ath``), to a short time
window (``iat``), to this server's nonce when one is required, and that was never seen before
(``jti``, remembered while the window lasts in a ``ReplayCache``). What it returns names the key
(its RFC 7638 thumbprint), for the resource server to match with the token's ``cnf.jkt``.

Nonces are stateless (SEP-1932 "Stateless DPoP Proof Replay Protection"): a timestamp and its
HMAC under the verifier's secret, valid ``nonce_lifetime`` seconds, so workers that share the
secret accept each other's. The replay cache is per process by default
(``InProcessReplayCache``, bounded in size and time); workers behind a balancer share one
through Redis (``cluster.RedisState.replay_cache()``), so a proof replayed to another worker is
refused too. A cache that cannot answer fails closed: ``DPoPUnavailable``, which the resource
server answers with 503 (retry), never accepting a proof it could not check.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, cast
from urllib.parse import unquote, urlsplit

from ._jwt import require

__all__ = [
    "DEFAULT_DPOP_ALGORITHMS",
    "INVALID_DPOP_PROOF",
    "USE_DPOP_NONCE",
    "DPoPError",
    "DPoPProof",
    "DPoPUnavailable",
    "DPoPVerifier",
    "InProcessReplayCache",
    "ReplayCache",
    "normalized_uri",
]

#: The RFC 9449 error codes (token endpoint: 400; resource server: 401).
INVALID_DPOP_PROOF: Final = "invalid_dpop_proof"
USE_DPOP_NONCE: Final = "use_dpop_nonce"
#: Asymmetric algorithms only (RFC 9449 4.2: never ``none``, never a MAC).
DEFAULT_DPOP_ALGORITHMS: Final = ("ES256", "ES384", "ES512", "EdDSA", "PS256", "PS384", "PS512",
                                  "RS256", "RS384", "RS512")  # fmt: skip
#: The key type each algorithm family signs with.
_KEY_TYPES: Final = {"ES": "EC", "Ed": "OKP", "PS": "RSA", "RS": "RSA"}
#: Members a public JWK never has (RFC 7518 6.2.2, 6.3.2, 6.4; RFC 8037 2).
_PRIVATE_MEMBERS: Final = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
#: Longer proofs, ``jti`` or nonces are refused before any parsing or hashing.
MAX_PROOF: Final = 8 * 1024
MAX_JTI: Final = 256


class DPoPError(Exception):
    """A proof refused: ``error`` is ``invalid_dpop_proof`` or ``use_dpop_nonce`` (RFC 9449
    7.1, 9); ``description`` says which rule failed and is shown to the client."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


class DPoPUnavailable(Exception):
    """A proof that could not be checked now (its replay cache did not answer): refused, and
    the client may retry (the resource server answers 503)."""


@dataclass(frozen=True)
class DPoPProof:
    """A proof that passed: its key's thumbprint (``cnf.jkt``), its ``jti`` and claims."""

    jkt: str
    jti: str
    claims: dict[str, Any] = field(repr=False)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def normalized_uri(url: str) -> str | None:
    """A URI compared as RFC 9449 4.3 says (RFC 3986 6.2.2 and 6.2.3): scheme and host in
    lower case, no default port, empty path as ``/``, percent-encoding decoded, no query or
    fragment. None for anything that is not an absolute http(s) URI."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    default = 443 if scheme == "https" else 80
    where = host if port is None or port == default else f"{host}:{port}"
    return f"{scheme}://{where}{unquote(parts.path) or '/'}"


class ReplayCache(Protocol):
    """Where a verifier remembers the proofs it accepted (``cluster.RedisState.replay_cache()``
    shares one between workers; ``InProcessReplayCache`` is the default)."""

    async def seen(self, key: str, lifetime: float) -> bool:
        """True if ``key`` was remembered already (a replay); else remember it ``lifetime``
        seconds and say False. Raises when it cannot tell: the proof is then refused."""
        ...


class InProcessReplayCache:
    """The ``jti`` values seen by this process, each kept until its proof could no longer be
    accepted.

    Entries are added in time order with the same lifetime, so the oldest go first; when
    ``max_entries`` are held the oldest is dropped even before it expires (a flood cannot
    grow memory; a proof that old is near the end of its window anyway).
    """

    def __init__(self, max_entries: int = 100_000, clock: Callable[[], float] = time.monotonic):
        self.max_entries = max_entries
        self._clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def add(self, key: str, lifetime: float) -> bool:
        """Remember ``key`` for ``lifetime`` seconds; False if it is remembered already."""
        now = self._clock()
        while self._seen:
            oldest, until = next(iter(self._seen.items()))
            if until > now:
                break
            del self._seen[oldest]
        if key in self._seen:
            return False
        while len(self._seen) >= self.max_entries:
            self._seen.popitem(last=False)
        self._seen[key] = now + lifetime
        return True

    async def seen(self, key: str, lifetime: float) -> bool:
        return not self.add(key, lifetime)


class DPoPVerifier:
    """Checks DPoP proofs for a resource server (``ResourceServer(dpop=...)``) or a token
    endpoint of one's own.

    ``algorithms`` are the proof algorithms accepted (asymmetric only; advertised as ``algs``
    in challenges and ``dpop_signing_alg_values_supported`` in the resource metadata).
    ``max_age`` and ``max_future`` bound ``iat`` (seconds before and after now; SEP-1932
    allows up to 300 each for servers that keep no state). ``require_nonce`` answers proofs
    without a valid nonce with ``use_dpop_nonce`` and a fresh ``DPoP-Nonce``; nonces last
    ``nonce_lifetime`` seconds and are signed with ``nonce_secret`` (random per process if not
    given: give the same one to every worker). ``replay_cache`` remembers the proofs accepted
    (default: an ``InProcessReplayCache`` of ``replay_cache_size`` entries; on many workers,
    ``RedisState.replay_cache()``).
    """

    def __init__(
        self,
        *,
        algorithms: Collection[str] = DEFAULT_DPOP_ALGORITHMS,
        max_age: float = 60.0,
        max_future: float = 5.0,
        require_nonce: bool = False,
        nonce_lifetime: float = 300.0,
        nonce_secret: bytes | None = None,
        replay_cache_size: int = 100_000,
        replay_cache: ReplayCache | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        refused = [alg for alg in algorithms if alg[:2] not in _KEY_TYPES]
        if refused or not algorithms:
            raise ValueError(f"DPoP proofs use asymmetric algorithms only, not {refused}")
        self._jws = require("joserfc.jws")
        self._jwk = require("joserfc.jwk")
        self._errors = require("joserfc.errors")
        self.algorithms = tuple(algorithms)
        # joserfc's default header limit (512 bytes) is below an RSA key's jwk header.
        self._registry = self._jws.JWSRegistry(algorithms=self.algorithms)
        self._registry.max_header_length = MAX_PROOF // 2
        self._registry.max_payload_length = MAX_PROOF // 2
        self.max_age = max_age
        self.max_future = max_future
        self.require_nonce = require_nonce
        self.nonce_lifetime = nonce_lifetime
        self._secret = nonce_secret if nonce_secret is not None else secrets.token_bytes(32)
        self._clock = clock
        self.replay_cache: ReplayCache = (
            replay_cache if replay_cache is not None else InProcessReplayCache(replay_cache_size)
        )

    # -- nonces -------------------------------------------------------------------------

    def _mac(self, stamp: str) -> str:
        return _b64(hmac.new(self._secret, stamp.encode(), hashlib.sha256).digest()[:18])

    def new_nonce(self) -> str:
        """A nonce for the ``DPoP-Nonce`` header: now, signed."""
        stamp = format(int(self._clock()), "x")
        return f"{stamp}.{self._mac(stamp)}"

    def nonce_valid(self, nonce: object) -> bool:
        if not isinstance(nonce, str) or len(nonce) > 64:
            return False
        stamp, _, mac = nonce.partition(".")
        if not stamp.isalnum() or not hmac.compare_digest(mac, self._mac(stamp)):
            return False
        try:
            age = self._clock() - int(stamp, 16)
        except ValueError:
            return False
        return -self.max_future <= age <= self.nonce_lifetime

    # -- proofs -------------------------------------------------------------------------

    def _parse(self, proof: str) -> tuple[Any, dict[str, Any]]:
        """The verified header and claims, or ``invalid_dpop_proof`` naming the rule broken."""
        errors = self._errors
        if len(proof) > MAX_PROOF or proof.count(".") != 2:
            raise DPoPError(INVALID_DPOP_PROOF, "the DPoP proof is not a compact JWS")
        try:
            header = self._jws.extract_compact(
                proof.encode("ascii"), registry=self._registry
            ).headers()
        except Exception:  # joserfc's errors, and whatever else junk makes its parser raise
            raise DPoPError(INVALID_DPOP_PROOF, "the DPoP proof is not a well-formed JWT") from None
        if header.get("typ") != "dpop+jwt":
            raise DPoPError(INVALID_DPOP_PROOF, "the DPoP proof's typ is not dpop+jwt")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise DPoPError(INVALID_DPOP_PROOF, f"the DPoP proof's alg is not one of {self.algs}")
        jwk_header = header.get("jwk")
        if not isinstance(jwk_header, dict):
            raise DPoPError(INVALID_DPOP_PROOF, "the DPoP proof has no jwk header")
        jwk = cast("dict[str, object]", jwk_header)
        if _PRIVATE_MEMBERS & set(jwk) or jwk.get("kty") != _KEY_TYPES[alg[:2]]:
            raise DPoPError(
                INVALID_DPOP_PROOF, "the DPoP proof's jwk is not a public key for its alg"
            )
        try:
            key = self._jwk.JWKRegistry.import_key(jwk)
            verified = self._jws.deserialize_compact(proof, key, registry=self._registry)
            claims = json.loads(verified.payload)
        except errors.BadSignatureError:
            raise DPoPError(INVALID_DPOP_PROOF, "the DPoP proof's signature is not valid") from None
        except Exception:  # a made-up key (an unknown curve...) is the client's fault too
            raise DPoPError(
                INVALID_DPOP_PROOF, "the DPoP proof's key or claims are not valid"
            ) from None
        if not isinstance(claims, dict):
            raise DPoPError(INVALID_DPOP_PROOF, "the DPoP proof's claims are not an object")
        return key, cast("dict[str, Any]", claims)

    @property
    def algs(self) -> str:
        """The accepted algorithms as the ``algs`` challenge parameter writes them."""
        return " ".join(self.algorithms)

    async def check(
        self,
        proof: str,
        *,
        method: str,
        url: str | Collection[str],
        access_token: str | None = None,
        replay_checked: bool = False,
    ) -> DPoPProof:
        """Check one request's proof (RFC 9449 4.3); ``url`` is the request's URI (or the
        URIs it may be known by, behind a proxy). Raises ``DPoPError``, or ``DPoPUnavailable``
        when its replay cache cannot answer. ``replay_checked``: the request was admitted, its
        ``jti`` remembered, by another worker that forwarded it here; the cache is not asked
        again (it would call the proof a replay)."""
        key, claims = self._parse(proof)
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti or len(jti) > MAX_JTI:
            raise DPoPError(INVALID_DPOP_PROOF, "the DPoP proof has no valid jti")
        if claims.get("htm") != method:
            raise DPoPError(INVALID_DPOP_PROOF, f"the DPoP proof's htm is not {method}")
        htu = claims.get("htu")
        targets = {normalized_uri(u) for u in ([url] if isinstance(url, str) else url)}
        if not isinstance(htu, str) or normalized_uri(htu) not in targets - {None}:
            raise DPoPError(INVALID_DPOP_PROOF, "the DPoP proof's htu is not this request's URI")
        iat = claims.get("iat")
        now = self._clock()
        if isinstance(iat, bool) or not isinstance(iat, int | float):
            raise DPoPError(INVALID_DPOP_PROOF, "the DPoP proof has no iat")
        if not now - self.max_age <= iat <= now + self.max_future:
            raise DPoPError(INVALID_DPOP_PROOF, "the DPoP proof's iat is outside the window")
        if access_token is not None:
            expected = _b64(hashlib.sha256(access_token.encode("ascii")).digest())
            ath = claims.get("ath")
            if not isinstance(ath, str) or not hmac.compare_digest(ath, expected):
                raise DPoPError(
                    INVALID_DPOP_PROOF, "the DPoP proof's ath is not the access token's hash"
                )
        if self.require_nonce and not self.nonce_valid(claims.get("nonce")):
            raise DPoPError(USE_DPOP_NONCE, "a DPoP nonce from this server is required")
        jkt: str = key.thumbprint()
        if replay_checked:
            return DPoPProof(jkt=jkt, jti=jti, claims=claims)
        # Kept until its iat leaves the window: after that the proof is refused on iat anyway.
        try:
            replayed = await self.replay_cache.seen(f"{jkt}.{jti}", self.max_age + self.max_future)
        except Exception as exc:  # fail closed: a proof not known to be fresh is not taken
            raise DPoPUnavailable(f"the DPoP replay cache is unreachable: {exc}") from exc
        if replayed:
            raise DPoPError(INVALID_DPOP_PROOF, "the DPoP proof was used before (jti replayed)")
        return DPoPProof(jkt=jkt, jti=jti, claims=claims)
