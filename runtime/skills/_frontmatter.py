"""A ``SKILL.md``'s YAML frontmatter: found, parsed, and rendered as the JSON object an entry
carries.

Parsed with PyYAML under the YAML 1.2 core schema rather than PyYAML's own YAML 1.1 one, so
that a server and a host built on other YAML libraries read the same frontmatter alike:
``yes``, ``on`` and ``2024-01-01`` stay strings, ``017`` is seventeen. What JSON cannot hold
(a key that is not a string, a key given twice) is an error rather than a guess.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, cast

import yaml

__all__ = ["FrontmatterError", "parse_frontmatter", "split_frontmatter"]

#: The block at the very start of the file, as the extension's conformance suite finds it.
_BLOCK = re.compile(r"---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_BOM = "\ufeff"


class FrontmatterError(ValueError):
    """A ``SKILL.md`` without a frontmatter block, or with one that is not a YAML mapping
    JSON can hold."""


class _CoreLoader(yaml.SafeLoader):
    """``SafeLoader`` with the YAML 1.2 core schema's implicit types only."""

    yaml_implicit_resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}  # noqa: RUF012


# types-PyYAML leaves these two methods' parameters untyped; typed here once.
_add_resolver = cast(
    "Callable[[str, re.Pattern[str], list[str]], None]",
    _CoreLoader.add_implicit_resolver,  # pyright: ignore[reportUnknownMemberType]
)


_add_resolver("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""])
_add_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_add_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
_add_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)


def _int(loader: _CoreLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    return int(text, 0) if text[:2] in ("0o", "0x") else int(text, 10)


def _float(loader: _CoreLoader, node: yaml.ScalarNode) -> float:
    text = str(loader.construct_scalar(node)).lower().replace(".inf", "inf").replace(".nan", "nan")
    value = float(text)
    if not math.isfinite(value):
        raise FrontmatterError(f"{text} is not a number JSON can hold")
    return value


def _mapping(loader: _CoreLoader, node: yaml.MappingNode) -> dict[str, Any]:
    construct = cast(
        "Callable[..., object]",
        loader.construct_object,  # pyright: ignore[reportUnknownMemberType]
    )
    out: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = construct(key_node, deep=True)
        if not isinstance(key, str):
            raise FrontmatterError(f"frontmatter key {key!r} is not a string")
        if key in out:
            raise FrontmatterError(f"frontmatter key {key!r} is given twice")
        out[key] = construct(value_node, deep=True)
    return out


_CoreLoader.add_constructor("tag:yaml.org,2002:int", _int)
_CoreLoader.add_constructor("tag:yaml.org,2002:float", _float)
_CoreLoader.add_constructor("tag:yaml.org,2002:map", _mapping)


def split_frontmatter(text: str) -> tuple[str, str]:
    """The frontmatter block's YAML and the body after it; ``FrontmatterError`` if the text
    does not begin with a ``---`` delimited block."""
    if text.startswith(_BOM):
        text = text[1:]
    found = _BLOCK.match(text)
    if found is None:
        raise FrontmatterError("SKILL.md does not begin with a '---' delimited YAML frontmatter")
    return found.group(1), text[found.end() :]


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter of a ``SKILL.md`` as a JSON object (``FrontmatterError`` otherwise)."""
    block, _ = split_frontmatter(text)
    try:
        value = yaml.load(block, Loader=_CoreLoader)  # a SafeLoader: no arbitrary objects
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"the frontmatter is not valid YAML: {exc}") from exc
    if not isinstance(value, dict):
        raise FrontmatterError("the frontmatter is not a YAML mapping")
    return cast("dict[str, Any]", value)
