"""What the commands share: one-line errors (exit status 2), progress on a terminal only,
``key=value`` arguments, and the revision option."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, TypeGuard, TypeVar, cast

import click
from mcpbind import generated
from mcpbind.generated.support import PaginatedMethodSpec
from mcpbind.runtime.core.errors import McpError, RuntimeFailure
from mcpbind.runtime.core.run import run

from ._target import TargetError

__all__ = [
    "REVISION_OPTION",
    "CliError",
    "OneLineCommand",
    "fail",
    "parse_pairs",
    "progress",
    "reason",
    "run_async",
]

T = TypeVar("T")


class CliError(Exception):
    """Bad input or an unreachable peer: one line on stderr, exit status 2."""


def fail(message: str) -> NoReturn:
    click.echo(f"mcpbind: error: {message}", err=True)
    sys.exit(2)


class OneLineCommand(click.Command):
    """A command whose arguments that do not parse are one line too (click would print the
    usage and a hint around it)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            fail(exc.format_message())


def progress(message: str) -> None:
    """A progress line on stderr, shown only when stderr is a terminal (logs stay clean)."""
    if sys.stderr.isatty():
        click.echo(f"mcpbind: {message}", err=True)


def _is_group(exc: BaseException) -> TypeGuard[BaseExceptionGroup[BaseException]]:
    return isinstance(exc, BaseExceptionGroup)


def _leaf(exc: BaseException) -> BaseException:
    """A group's first leaf (groups nest), else the exception itself."""
    while _is_group(exc) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def reason(exc: BaseException) -> str:
    """The innermost cause worth one line: a group's first leaf, else the exception itself."""
    exc = _leaf(exc)
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


#: What a peer or the user can cause: a one-line error, not a traceback.
_EXPECTED = (CliError, TargetError, McpError, RuntimeFailure)


def run_async(main: Callable[..., Any], *args: Any) -> Any:
    """Run ``main`` on the runtime's loop. A ``CliError``, a bad target, or what the server
    answered or did (an error, a closed connection, a timeout) is a one-line error; Ctrl-C
    ends quietly with status 130, as shells expect."""
    try:
        return run(main, *args)
    except KeyboardInterrupt:
        sys.exit(130)
    except BaseException as exc:
        leaf = _leaf(exc)
        if isinstance(leaf, CliError | TargetError):
            fail(str(leaf))
        if isinstance(leaf, _EXPECTED):
            fail(reason(leaf))
        raise


def _check_revision(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and value not in generated.REVISIONS:
        raise click.BadParameter(
            f"unknown revision {value!r}; have: {', '.join(generated.REVISIONS)}"
        )
    return value


REVISION_OPTION = click.option(
    "--revision",
    default=None,
    callback=_check_revision,
    help="Protocol revision to speak (default: the newest handshake revision; "
    "2026-07-28: the stateless era).",
)


def parse_pairs(
    pairs: Sequence[str], json_args: str | None, schema: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``key=value`` arguments (plus ``--json-args``) as a dict. A value is JSON when it parses
    as JSON (``3``, ``true``, ``{"a": 1}``), else a string; where ``schema`` (an input schema)
    says a property is a string, the text stays as given (``zip=02134`` is not a number)."""
    arguments: dict[str, Any] = {}
    if json_args is not None:
        try:
            loaded = json.loads(json_args)
        except ValueError as exc:
            raise CliError(f"--json-args is not JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise CliError("--json-args must be a JSON object")
        arguments.update(cast("dict[str, Any]", loaded))
    declared: object = (schema or {}).get("properties")
    # A server's schema is not trusted to be well formed: properties that are no object
    # constrain nothing.
    properties = cast("dict[str, object]", declared) if isinstance(declared, dict) else {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise CliError(f"argument {pair!r} is not key=value")
        arguments[key] = _value(key, text, properties.get(key))
    return arguments


def _value(key: str, text: str, prop: object) -> Any:
    kinds = _types(prop)
    if "string" in kinds and not (text == "null" and "null" in kinds):
        return text
    try:
        return json.loads(text)
    except ValueError:
        if kinds and "string" not in kinds:
            wanted = " or ".join(sorted(kinds))
            raise CliError(f"argument {key}={text!r} is not {wanted} JSON") from None
        return text


def _types(prop: object) -> set[str]:
    if not isinstance(prop, dict):
        return set()
    schema = cast("dict[str, object]", prop)
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in cast("list[object]", kind) if isinstance(k, str)}
    found: set[str] = set()
    options = schema.get("anyOf") or schema.get("oneOf")
    # Anything but a list of schemas (a dict's keys, a string's letters) adds no type.
    for option in cast("list[object]", options) if isinstance(options, list) else ():
        found |= _types(option)
    return found


def is_paginated(spec: object) -> TypeGuard[PaginatedMethodSpec[Any, Any, Any]]:
    """A list method's spec (``tools/list``), whatever its item type."""
    return isinstance(spec, PaginatedMethodSpec)
