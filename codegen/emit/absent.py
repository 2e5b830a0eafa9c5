"""Mark the optional fields whose schema refuses ``null``, so that ``None`` there is never written.

datamodel-code-generator types every optional property ``X | None = None``: ``None`` is how
Python spells "absent". Where the schema does not let the property be ``null`` (nearly every
optional property), a ``None`` written to the wire would be a message the schema refuses, so
such a field gets ``ABSENT_IF_NONE`` (``Field(exclude_if=...)``): ``Tool(description=None)``
dumps without ``description``. Where the schema admits ``null`` (``Error.data``, a JSON value),
``None`` is data and the field is left as it is. The generator has no option for this, so the
fields are marked in its output, from the same prepared schema it read.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ..errors import CodegenError
from ..ir import JSONSchema
from ..ir.refs import ref_name
from ..jsonvalues import is_array, is_object
from .schema_prep import SUPPORT

MARKER = "ABSENT_IF_NONE"
SUPPORT_IMPORT = f"from {SUPPORT} import "

__all__ = ["absent_if_none_fields", "admits_null", "mark_absent_if_none"]

# A line as ``ast`` counts them (ended by \r\n, \r or \n only, unlike ``str.splitlines``).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def admits_null(node: Any, defs: dict[str, JSONSchema], seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``null`` is valid against ``node`` (``$ref`` into ``defs`` followed)."""
    if node is True:
        return True
    if not is_object(node):
        return False
    target = ref_name(node)
    if target is not None:
        return target not in seen and admits_null(defs.get(target), defs, seen | {target})
    if "const" in node:
        return node["const"] is None
    if "enum" in node:
        return None in node["enum"]
    for key in ("anyOf", "oneOf"):
        if is_array(node.get(key)):
            return any(admits_null(member, defs, seen) for member in node[key])
    if is_array(node.get("allOf")) and not all(
        admits_null(member, defs, seen) for member in node["allOf"]
    ):
        return False
    kind = node.get("type")
    return kind is None or kind == "null" or (is_array(kind) and "null" in kind)


def _own_properties(schema: JSONSchema) -> tuple[dict[str, Any], set[str]]:
    """Properties a definition declares itself (inline ``allOf`` members included) and its
    required names (those of every ``allOf`` member)."""
    props: dict[str, Any] = dict(schema.get("properties", {}))
    required = set(schema.get("required", []))
    for member in schema.get("allOf", []):
        if is_object(member) and ref_name(member) is None:
            inner, inner_required = _own_properties(member)
            props.update(inner)
            required |= inner_required
        elif is_object(member):
            required |= set(member.get("required", []))
    return props, required


def absent_if_none_fields(defs: dict[str, JSONSchema]) -> dict[str, frozenset[str]]:
    """Class name -> JSON names of its optional properties that refuse ``null``."""
    out: dict[str, frozenset[str]] = {}
    for name, schema in defs.items():
        props, required = _own_properties(schema)
        fields = frozenset(
            prop
            for prop, node in props.items()
            if prop not in required and not admits_null(node, defs)
        )
        if fields:
            out[name] = fields
    return out


def _json_name(statement: ast.AnnAssign) -> str:
    """The property a field reads: its ``Field(alias=...)``, else its Python name."""
    assert isinstance(statement.target, ast.Name)
    annotation = statement.annotation
    if (
        isinstance(annotation, ast.Subscript)
        and isinstance(annotation.value, ast.Name)
        and annotation.value.id == "Annotated"
        and isinstance(annotation.slice, ast.Tuple)
    ):
        for meta in annotation.slice.elts[1:]:
            if isinstance(meta, ast.Call):
                for keyword in meta.keywords:
                    if keyword.arg == "alias" and isinstance(keyword.value, ast.Constant):
                        return str(keyword.value.value)
    return statement.target.id


def _segment(lines: list[str], node: ast.expr) -> str:
    """``ast.get_source_segment`` over lines split once: it splits the whole source per call,
    which made this pass most of ``mcpbind generate``'s time."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    end = node.end_col_offset
    if first == last:
        return lines[first].encode()[node.col_offset : end].decode()
    head = lines[first].encode()[node.col_offset :].decode()
    return head + "".join(lines[first + 1 : last]) + lines[last].encode()[:end].decode()


def _marked(annotation: ast.expr, lines: list[str]) -> str:
    text = _segment(lines, annotation)
    if (
        isinstance(annotation, ast.Subscript)
        and isinstance(annotation.value, ast.Name)
        and annotation.value.id == "Annotated"
    ):
        return f"{text[:-1].rstrip().rstrip(',')}, {MARKER}]"
    return f"Annotated[{text}, {MARKER}]"


def mark_absent_if_none(source: str, fields: dict[str, frozenset[str]]) -> tuple[str, int]:
    """``source`` (datamodel-code-generator's ``types.py``) with ``ABSENT_IF_NONE`` on every field
    listed in ``fields``; and how many fields were marked."""
    tree = ast.parse(source)
    lines = _LINE.findall(source)
    edits: list[tuple[ast.expr, str]] = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.name not in fields:
            continue
        for statement in node.body:
            if (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and isinstance(statement.value, ast.Constant)
                and statement.value.value is None
                and _json_name(statement) in fields[node.name]
            ):
                edits.append((statement.annotation, _marked(statement.annotation, lines)))
    if not edits:
        return source, 0
    for annotation, replacement in sorted(
        edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True
    ):
        first, last = annotation.lineno - 1, (annotation.end_lineno or annotation.lineno) - 1
        head = lines[first].encode()[: annotation.col_offset].decode()
        tail = lines[last].encode()[annotation.end_col_offset or 0 :].decode()
        lines[first : last + 1] = [head + replacement + tail]
    return _with_imports("".join(lines)), len(edits)


def _with_imports(source: str) -> str:
    """Import the marker (and ``Annotated``, which a module may not import yet)."""
    lines = source.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.startswith(SUPPORT_IMPORT):
            names = {n.strip() for n in line[len(SUPPORT_IMPORT) :].split(",")} | {MARKER}
            lines[index] = SUPPORT_IMPORT + ", ".join(sorted(names)) + "\n"
            break
    else:
        raise CodegenError(f"types.py: no line {SUPPORT_IMPORT!r}... to extend")
    out = "".join(lines)
    if not any(
        isinstance(n, ast.ImportFrom)
        and n.module == "typing"
        and any(a.name == "Annotated" for a in n.names)
        for n in ast.parse(out).body
    ):
        out = out.replace(SUPPORT_IMPORT, "from typing import Annotated\n" + SUPPORT_IMPORT, 1)
    return out
