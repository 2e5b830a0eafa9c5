"""Parsing ``WWW-Authenticate`` (RFC 9110 section 11.6.1) and reading its Bearer challenge.

A 401 or 403 from a protected MCP server names, in its Bearer challenge (RFC 6750 section 3,
RFC 9728 section 5.1), where its protected-resource metadata lives (``resource_metadata``), the
scopes the request needs (``scope``) and why it failed (``error``). A header that does not parse
is refused with a ``ChallengeError`` saying where it went wrong, never guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ._errors import ChallengeError

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_SPACE = " \t"
#: Longer headers are refused rather than parsed: no server needs this much.
MAX_HEADER = 8192


@dataclass(frozen=True)
class Challenge:
    """One challenge: its scheme, its auth-params (names lowercased) or its token68."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict[str, str])
    token68: str | None = None

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")

    @property
    def scope(self) -> str | None:
        return self.params.get("scope")

    @property
    def scopes(self) -> list[str]:
        return (self.scope or "").split()

    @property
    def error(self) -> str | None:
        return self.params.get("error")


def _skip(text: str, at: int, chars: str) -> int:
    while at < len(text) and text[at] in chars:
        at += 1
    return at


def _quoted(text: str, at: int) -> tuple[str, int]:
    """The quoted-string starting at ``text[at] == '"'``, unescaped, and the index after it."""
    out: list[str] = []
    at += 1
    while at < len(text):
        char = text[at]
        if char == '"':
            return "".join(out), at + 1
        if char == "\\":
            at += 1
            if at >= len(text):
                break
            char = text[at]
        out.append(char)
        at += 1
    raise ChallengeError("malformed WWW-Authenticate header: unterminated quoted string")


def _value(text: str, at: int) -> tuple[str, int]:
    if at < len(text) and text[at] == '"':
        return _quoted(text, at)
    found = _TOKEN.match(text, at)
    if found is None:
        raise ChallengeError(f"malformed WWW-Authenticate header: no parameter value at {at}")
    return found.group(), found.end()


def _ends_item(text: str, at: int) -> bool:
    at = _skip(text, at, _SPACE)
    return at >= len(text) or text[at] == ","


def parse_www_authenticate(header: str) -> list[Challenge]:
    """Every challenge in one ``WWW-Authenticate`` value, in order.

    Raises ``ChallengeError`` on anything outside the grammar: a missing scheme, an unterminated
    quoted string, a parameter without a value, a parameter given twice, junk between items.
    """
    if len(header) > MAX_HEADER:
        raise ChallengeError(f"WWW-Authenticate header longer than {MAX_HEADER} characters")
    challenges: list[Challenge] = []
    at = 0
    while True:
        at = _skip(header, at, _SPACE + ",")
        if at >= len(header):
            break
        found = _TOKEN.match(header, at)
        if found is None:
            raise ChallengeError(
                f"malformed WWW-Authenticate header: unexpected {header[at]!r} at {at}"
            )
        name, after = found.group(), found.end()
        equals = _skip(header, after, _SPACE)
        if challenges and equals < len(header) and header[equals] == "=":
            current = challenges[-1]
            if current.token68 is not None:
                raise ChallengeError("malformed WWW-Authenticate header: token68 with parameters")
            key = name.lower()
            if key in current.params:
                raise ChallengeError(f"malformed WWW-Authenticate header: {key!r} given twice")
            value, at = _value(header, _skip(header, equals + 1, _SPACE))
            current.params[key] = value
        else:
            challenge = Challenge(name)
            challenges.append(challenge)
            at = _skip(header, after, _SPACE)
            if at > after:
                blob = _TOKEN68.match(header, at)
                if blob is not None and _ends_item(header, blob.end()):
                    challenges[-1] = Challenge(name, token68=blob.group())
                    at = blob.end()
                continue
        if not _ends_item(header, at):
            raise ChallengeError(
                f"malformed WWW-Authenticate header: unexpected {header[at : at + 10]!r} at {at}"
            )
    return challenges


def _checked(challenge: Challenge) -> Challenge:
    url = challenge.resource_metadata
    if url is not None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ChallengeError(
                f"WWW-Authenticate resource_metadata is not an absolute URL: {url!r}"
            )
    return challenge


def oauth_challenge(headers: Iterable[str], dpop: bool = False) -> Challenge | None:
    """The OAuth challenge among all the ``WWW-Authenticate`` values, checked; None if absent.

    Bearer's, or with ``dpop`` (the client presents DPoP-bound tokens, RFC 9449 7.1) the
    ``DPoP`` challenge first; either scheme's is taken when the other is absent (a DPoP-only
    server challenges with ``DPoP`` alone). A ``resource_metadata`` the chosen one lacks is
    taken from the other. It must be an absolute http(s) URL: it is fetched next.
    """
    found: dict[str, Challenge] = {}
    for header in headers:
        for challenge in parse_www_authenticate(header):
            scheme = challenge.scheme.lower()
            if scheme in ("bearer", "dpop"):
                found.setdefault(scheme, challenge)
    order = ("dpop", "bearer") if dpop else ("bearer", "dpop")
    chosen = next((found[scheme] for scheme in order if scheme in found), None)
    if chosen is None:
        return None
    if chosen.resource_metadata is None:
        other = next((c for c in found.values() if c.resource_metadata is not None), None)
        if other is not None:
            params = {**chosen.params, "resource_metadata": str(other.resource_metadata)}
            chosen = Challenge(chosen.scheme, params, chosen.token68)
    return _checked(chosen)


def bearer_challenge(headers: Iterable[str]) -> Challenge | None:
    """The Bearer challenge among all the ``WWW-Authenticate`` values, checked; None if absent.

    ``resource_metadata``, when present, must be an absolute http(s) URL: it is fetched next.
    """
    for header in headers:
        for challenge in parse_www_authenticate(header):
            if challenge.scheme.lower() == "bearer":
                return _checked(challenge)
    return None
