"""Server-surface snapshots (``mcpbind inspect --json``): recognise one, read it, check it.

A snapshot is recognised by content, not by name: a JSON object whose ``format`` is
``mcpbind.surface/1``. It is checked against ``surface.schema.json``, the published form, by the
small validator below: ``diff`` runs after a plain ``pip install mcpbind``, which brings no JSON
Schema library, and the schema uses only the keywords it knows (``_KNOWN``; a test keeps the two
in step and checks the validator against ``jsonschema`` on good and bad snapshots).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import CodegenError
from ..jsonvalues import is_array, is_object

# The package whose files these are (``__package__`` is optional to a checker).
_PACKAGE = __name__.rpartition(".")[0]

SURFACE_FORMAT = "mcpbind.surface/1"
_PREFIX = "mcpbind.surface/"
#: The keywords ``check`` implements; the schema file uses no other (tests hold it to that).
KNOWN_KEYWORDS = frozenset(
    {"type", "const", "required", "properties", "additionalProperties", "items", "$ref"}
    | {"minLength", "$schema", "$id", "$defs", "title", "description"}
)
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "integer": (int,),
    "number": (int, float),
}
#: Each list of a snapshot and the key that names its entries.
LISTS = (
    ("tools", "name"),
    ("resources", "uri"),
    ("resourceTemplates", "uriTemplate"),
    ("prompts", "name"),
)


def surface_schema() -> dict[str, Any]:
    """``surface.schema.json``, as the package carries it."""
    text = resources.files(_PACKAGE).joinpath("surface.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def read_json(path: Path) -> Any | None:
    """The JSON document at ``path``, or None when it is not a readable JSON file."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def is_snapshot(document: Any) -> bool:
    """True for a JSON object that says it is a server-surface snapshot (of any version)."""
    return (
        is_object(document)
        and isinstance(document.get("format"), str)
        and document["format"].startswith(_PREFIX)
    )


def load_snapshot(path: Path, document: Any) -> dict[str, Any]:
    """``document`` (read from ``path``) checked as a snapshot; ``CodegenError`` if it is not one."""
    if not is_object(document) or document.get("format") != SURFACE_FORMAT:
        found = document.get("format") if is_object(document) else None
        raise CodegenError(
            f"{path}: snapshot format {found!r} is not supported (this mcpbind reads "
            f"{SURFACE_FORMAT!r})"
        )
    schema = surface_schema()
    problem = check(document, schema, schema, "")
    if problem is not None:
        raise CodegenError(f"{path}: not a valid server snapshot: {problem}")
    for key, name in LISTS:
        seen: set[str] = set()
        for entry in document[key]:
            if entry[name] in seen:
                raise CodegenError(f"{path}: {key} lists {name} {entry[name]!r} twice")
            seen.add(entry[name])
    return document


def check(value: Any, schema: Any, root: dict[str, Any], where: str) -> str | None:
    """The first way ``value`` fails ``schema`` (``where`` is its JSON pointer), or None."""
    if not is_object(schema):
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = root["$defs"][ref.removeprefix("#/$defs/")]
        problem = check(value, target, root, where)
        if problem is not None:
            return problem
    at = where or "/"
    if "const" in schema and value != schema["const"]:
        return f"{at}: expected {json.dumps(schema['const'])}"
    kinds = schema.get("type")
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else list(kinds)
        if not any(_is(value, kind) for kind in names):
            return f"{at}: expected {' or '.join(names)}"
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        return f"{at}: must not be empty"
    if is_array(value) and "items" in schema:
        for index, item in enumerate(value):
            problem = check(item, schema["items"], root, f"{where}/{index}")
            if problem is not None:
                return problem
    if is_object(value):
        return _check_object(value, schema, root, where)
    return None


def _is(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, _TYPES[kind])


def _check_object(
    value: dict[str, Any], schema: dict[str, Any], root: dict[str, Any], where: str
) -> str | None:
    for name in schema.get("required", []):
        if name not in value:
            return f"{where or '/'}: '{name}' is required"
    properties: dict[str, Any] = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            problem = check(item, properties[name], root, f"{where}/{name}")
        elif extra is False:
            problem = f"{where or '/'}: unexpected '{name}'"
        else:
            problem = check(item, extra, root, f"{where}/{name}")
        if problem is not None:
            return problem
    return None
