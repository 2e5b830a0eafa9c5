"""RFC 6570 URI templates, levels 1 to 4, matched against URIs in time linear in the URI.

A template is literal text and expressions: ``{var}``, ``{+path}``, ``{#frag}``, ``{.ext}``,
``{/seg*}``, ``{;p}``, ``{?q,lang}``, ``{&x}``, with ``*`` (explode) and ``:n`` (prefix). Matching
inverts expansion where the inverse is well defined, left to right and without backtracking
(the TypeScript SDK's regex with nested quantifiers, CVE-2026-0621, is what this avoids):

- an expression ends where the text after it starts: its first occurrence, or the template's
  end for the final text; before another expression, at that expression's first character
  (``{name}{.ext}``). Two expressions with nothing between them need the second to start with
  a character (``{a}{b}`` is refused at registration: where one ends is anyone's guess);
- within its part of the URI an expression stops at the characters its values never hold
  unencoded (``/``, ``?`` and ``#`` for ``{var}``; none for ``{+path}``...), then splits on
  its separator. Unnamed variables take the items in order (an exploded one the rest, as a
  list; the last one the rest joined where the separator may appear in values: ``+``, ``#``,
  ``.``); named ones (``;``, ``?``, ``&``) take theirs by name, in any order. A variable the
  URI leaves out is absent (its parameter's default);
- every value is percent-decoded (strict UTF-8); a prefix ``:n`` caps its length.

Each step is one forward scan (``str.find``, ``str.split``, a one-character-class search), so
the work is proportional to the URI's length times the template's size.

Values are guarded against path traversal unless the template opts out: a ``..`` segment, an
absolute path (``/x``, ``\\x``, ``C:\\``), a NUL, or, after decoding, a percent-encoded ``.``,
``/``, ``\\`` or NUL (a value encoded twice) raises ``UnsafeValue``.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple
from urllib.parse import quote, unquote

__all__ = ["Expression", "UnsafeValue", "UriTemplate", "VarSpec", "unsafe_reason"]


# NamedTuples, not frozen dataclasses: as immutable, and a fraction of the cost to define at
# import (a frozen dataclass compiles five methods from source).
class _Operator(NamedTuple):
    first: str  #: what the expansion starts with
    sep: str  #: between values
    named: bool  #: ``name=value`` items
    stops: str  #: characters never in its part of a URI unencoded
    joins_rest: bool  #: the separator may appear in a value, so the last variable takes the rest
    safe: str  #: characters ``expand`` leaves unencoded (besides unreserved ones)


_RESERVED = ":/?#[]@!$&'()*+,;="

#: RFC 6570 appendix A, plus what matching needs to know.
_OPERATORS: Final[dict[str, _Operator]] = {
    # ``joins_rest`` for ``{var}`` too: RFC 6570 encodes a comma in a value, but level-1
    # matching here always took one (``{id}`` matched ``a,b``), and clients still send them.
    "": _Operator("", ",", False, "/?#", True, ""),
    "+": _Operator("", ",", False, "", True, _RESERVED),
    "#": _Operator("#", ",", False, "", True, _RESERVED),
    ".": _Operator(".", ".", False, "/?#", True, ""),
    "/": _Operator("/", "/", False, "?#", False, ""),
    ";": _Operator(";", ";", True, "/?#", False, ""),
    "?": _Operator("?", "&", True, "#", False, ""),
    "&": _Operator("&", "&", True, "#", False, ""),
}

_VARSPEC = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:(\*)|:([1-9][0-9]{0,3}))?")
#: At an item's start (the string's, or after the NUL that joins items): ``/``, ``\``, ``C:/``.
_ABSOLUTE = re.compile(r"(?:^|\x00)(?:[/\\]|[A-Za-z]:[/\\])")
_SEGMENTS = re.compile(r"[/\\\x00]")
_ENCODED_TWICE = ("%2e", "%2f", "%5c", "%00")

Values = dict[str, "str | list[str]"]


class UnsafeValue(ValueError):
    """A matched value the traversal guard refuses; the message says which and why."""


class VarSpec(NamedTuple):
    name: str
    explode: bool = False
    prefix: int | None = None


class Expression(NamedTuple):
    operator: str
    variables: tuple[VarSpec, ...]


def _parse(template: str) -> list[str | Expression]:
    tokens: list[str | Expression] = []
    pos = 0
    while pos < len(template):
        opening = template.find("{", pos)
        text = template[pos : len(template) if opening == -1 else opening]
        if "}" in text:
            raise ValueError(f"URI template {template!r}: a '}}' without its '{{'")
        if text:
            tokens.append(text)
        if opening == -1:
            break
        closing = template.find("}", opening)
        if closing == -1 or "{" in template[opening + 1 : closing]:
            raise ValueError(f"URI template {template!r}: a '{{' without its '}}'")
        tokens.append(_expression(template, template[opening + 1 : closing]))
        pos = closing + 1
    return _merge_named(template, tokens)


def _expression(template: str, body: str) -> Expression:
    operator = body[:1] if body[:1] in _OPERATORS and body[:1] != "" else ""
    if body[:1] and body[:1] in "=,!@|":
        raise ValueError(f"URI template {template!r}: the operator {body[:1]!r} is reserved")
    specs: list[VarSpec] = []
    for item in body[len(operator) :].split(","):
        found = _VARSPEC.fullmatch(item)
        if found is None:
            raise ValueError(
                f"URI template {template!r}: {item!r} is not a variable (a Python identifier, "
                "optionally with '*' or ':n')"
            )
        name, star, prefix = found.groups()
        specs.append(VarSpec(name, star is not None, int(prefix) if prefix else None))
    if not _OPERATORS[operator].named and sum(spec.explode for spec in specs) > 1:
        raise ValueError(
            f"URI template {template!r}: one exploded variable per expression (where one list "
            "ends and the next starts is not in the URI)"
        )
    return Expression(operator, tuple(specs))


def _merge_named(template: str, tokens: list[str | Expression]) -> list[str | Expression]:
    """Adjacent named expressions of one separator (``{?q}{&x}``, ``{;a}{;b}``) as one, and
    adjacent expressions whose boundary is undefined refused."""
    out: list[str | Expression] = []
    for token in tokens:
        before = out[-1] if out else None
        if isinstance(token, Expression) and isinstance(before, Expression):
            if _OPERATORS[token.operator].first in ("&", ";") and (
                _OPERATORS[before.operator].sep == _OPERATORS[token.operator].first
            ):
                out[-1] = Expression(before.operator, before.variables + token.variables)
                continue
            if not _OPERATORS[token.operator].first:
                raise ValueError(
                    f"URI template {template!r}: two expressions with nothing between them "
                    "need the second to start with an operator ('.', '/', ';', '?', '&', '#')"
                )
        out.append(token)
    return out


def unsafe_reason(value: str | list[str]) -> str | None:
    """Why the traversal guard refuses a decoded value (or any item of a list), or None.

    A list is checked joined by NUL, so every test is one C-level scan whatever its length:
    a NUL of its own shows in the count, each item starts after a NUL, and an item boundary
    is a segment boundary."""
    items = value if isinstance(value, list) else [value]
    joined = "\x00".join(items)
    if joined.count("\x00") != len(items) - 1:
        return "holds a NUL character"
    if _ABSOLUTE.search(joined):
        return "is an absolute path"
    if ".." in _SEGMENTS.split(joined):
        return "holds a '..' segment"
    lowered = joined.lower()
    if any(code in lowered for code in _ENCODED_TWICE):
        return "is percent-encoded twice"
    return None


class UriTemplate:
    """A parsed template: ``match`` a URI to its variables, ``expand`` values to a URI."""

    def __init__(self, template: str, *, guard: bool = True) -> None:
        self.template = template
        self.guard = guard
        self.tokens = _parse(template)
        self.expressions = [t for t in self.tokens if isinstance(t, Expression)]
        specs = [spec for expression in self.expressions for spec in expression.variables]
        self.variables = tuple(spec.name for spec in specs)
        if len(set(self.variables)) != len(self.variables):
            raise ValueError(f"URI template {template!r}: a variable appears twice")
        self.exploded = frozenset(spec.name for spec in specs if spec.explode)
        # One compiled class of stop characters per (expression, what follows): a single
        # character class, searched forward once, never backtracks.
        self._stops: list[re.Pattern[str] | None] = []
        for index, token in enumerate(self.tokens):
            if not isinstance(token, Expression):
                self._stops.append(None)
                continue
            after = self.tokens[index + 1] if index + 1 < len(self.tokens) else None
            stops = _OPERATORS[token.operator].stops
            if isinstance(after, Expression):
                stops += _OPERATORS[after.operator].first
            self._stops.append(re.compile(f"[{re.escape(stops)}]") if stops else None)

    @property
    def is_template(self) -> bool:
        return bool(self.expressions)

    def match(self, uri: str) -> Values | None:
        """The variables of ``uri``, or None when it does not fit; ``UnsafeValue`` when it fits
        but a value fails the traversal guard."""
        values: Values = {}
        pos, tokens, end_of_uri = 0, self.tokens, len(uri)
        for index, token in enumerate(tokens):
            if isinstance(token, str):
                if not uri.startswith(token, pos):
                    return None
                pos += len(token)
                continue
            end = self._end(index, uri, pos)
            if end is None or not self._assign(token, uri[pos:end], values):
                return None
            pos = end
        if pos != end_of_uri:
            return None
        if self.guard:
            self._check(values)
        return values

    def _end(self, index: int, uri: str, pos: int) -> int | None:
        """Where the expression at ``tokens[index]`` ends in ``uri`` (it starts at ``pos``)."""
        expression = self.tokens[index]
        assert isinstance(expression, Expression)
        after = self.tokens[index + 1] if index + 1 < len(self.tokens) else None
        stops = self._stops[index]
        if isinstance(after, Expression):
            first = _OPERATORS[expression.operator].first
            scan = pos + 1 if first and uri.startswith(first, pos) else pos
            found = stops.search(uri, scan) if stops is not None else None
            return len(uri) if found is None else found.start()
        if after is None:
            end = len(uri)
        elif index + 2 == len(self.tokens):  # the template's final text: the URI's end
            end = len(uri) - len(after)
            if end < pos or not uri.endswith(after):
                return None
        else:
            end = uri.find(after, pos)
            if end == -1:
                return None
        if stops is not None and stops.search(uri, pos, end) is not None:
            return None
        return end

    def _assign(self, expression: Expression, part: str, values: Values) -> bool:
        """The values of one expression's part of the URI; False when it cannot be one."""
        if not part:
            return True  # every variable undefined
        operator = _OPERATORS[expression.operator]
        if operator.first:
            if not part.startswith(operator.first):
                return False
            part = part[1:]
        items = part.split(operator.sep)
        if operator.named:
            return self._assign_named(expression, items, values)
        specs = expression.variables
        exploded = [index for index, spec in enumerate(specs) if spec.explode]
        if exploded:
            # The variables before the list take the first items, those after it the last.
            at = exploded[0]
            front, back = specs[:at], specs[at + 1 :]
            middle_end = max(len(front), len(items) - len(back))
            for spec, item in zip(front, items, strict=False):
                if not _put(values, spec, item):
                    return False
            for spec, item in zip(back, items[middle_end:], strict=False):
                if not _put(values, spec, item):
                    return False
            rest = items[len(front) : middle_end]
            if not rest:
                return True
            # The whole list at once (C-level steps, no call per item): many segments are
            # the cheap way to make a long URI.
            if "%" in part:
                decoded = _decode_all(rest)
                if decoded is None:
                    return False
                rest = decoded
            values[specs[at].name] = rest
            return True
        if len(items) > len(specs):
            if not operator.joins_rest:
                return False
            items = [*items[: len(specs) - 1], operator.sep.join(items[len(specs) - 1 :])]
        return all(_put(values, spec, item) for spec, item in zip(specs, items, strict=False))

    @staticmethod
    def _assign_named(expression: Expression, items: list[str], values: Values) -> bool:
        by_name = {spec.name: spec for spec in expression.variables}
        for item in items:
            name, _, value = item.partition("=")
            spec = by_name.get(name)
            if spec is None or (not spec.explode and name in values):
                return False  # a name the template does not have, or one given twice
            if not _put(values, spec, value):
                return False
        return True

    def _check(self, values: Values) -> None:
        for name, value in values.items():
            reason = unsafe_reason(value)
            if reason is not None:
                raise UnsafeValue(f"the value of {name!r} {reason}")

    def expand(self, values: Values) -> str:
        """The URI for ``values`` (RFC 6570 expansion; a missing variable is undefined)."""
        out: list[str] = []
        for token in self.tokens:
            if isinstance(token, str):
                out.append(token)
                continue
            operator = _OPERATORS[token.operator]
            items: list[str] = []
            for spec in token.variables:
                value = values.get(spec.name)
                if value is None:
                    continue
                for one in value if isinstance(value, list) else [value]:
                    one = one[: spec.prefix] if spec.prefix else one
                    encoded = quote(one, safe=operator.safe)
                    if not operator.named:
                        items.append(encoded)
                    elif encoded or operator.first != ";":
                        items.append(f"{spec.name}={encoded}")
                    else:  # RFC 6570: ";" names an empty value alone
                        items.append(spec.name)
            if items:
                out.append(operator.first + operator.sep.join(items))
        return "".join(out)


def _decode_all(items: list[str]) -> list[str] | None:
    """Percent-decode every item in one ``unquote`` of them joined by NUL (one call, not one
    per item); item by item when an item holds a NUL of its own. None: not UTF-8."""
    try:
        if "\x00" not in "".join(items):
            joined = unquote("\x00".join(items), errors="strict")
            if joined.count("\x00") == len(items) - 1:
                return joined.split("\x00")
        return [unquote(item, errors="strict") for item in items]
    except UnicodeDecodeError:
        return None


def _put(values: Values, spec: VarSpec, raw: str) -> bool:
    try:
        value = unquote(raw, errors="strict")
    except UnicodeDecodeError:
        return False
    if spec.prefix is not None and len(value) > spec.prefix:
        return False
    if spec.explode:
        listed = values.setdefault(spec.name, [])
        assert isinstance(listed, list)
        listed.append(value)
    else:
        values[spec.name] = value
    return True
