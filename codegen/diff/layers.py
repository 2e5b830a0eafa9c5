"""Extension schemas as layers over a revision: ``2026-07-28+tasks``, ``tasks@2026-05-22``.

A side of ``mcpbind diff`` may name pinned extensions after its revision, each ``+name`` or
``+name@version`` (the newest pinned version when none is given); a side that is an extension
alone (``tasks@2026-05-22``) is that extension over the revision it extends (its pin's ``base``).
The extension's definitions are added to the revision's. Extension schemas carry copies of core
definitions (``Tool``, ``Result``...): a name the revision already defines keeps the revision's
definition, and a note counts the copies that differ, so two versions of an extension over the
same revision differ only where the extension's own definitions do.

Only definitions are layered: an extension's requests do not join the revision's method table
(the IR infers that from the protocol's own unions), so they are compared as definitions.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CodegenError
from ..load import LoadedSchema, load_extension
from ..pins import ExtensionPin, get_extension_pin, load_extension_pins

__all__ = ["Layered", "layer", "split_spec"]


@dataclass(frozen=True)
class Layered:
    """A loaded side with its extensions merged in, and what the merge has to say."""

    loaded: LoadedSchema
    label_suffix: str
    notes: tuple[str, ...]


def _extension(part: str) -> ExtensionPin:
    name, _, version = part.partition("@")
    return get_extension_pin(name, version or None)


def split_spec(spec: str) -> tuple[str, list[ExtensionPin]]:
    """(revision or path, extension pins) of a side; for an extension alone, the revision is the
    one its pin extends."""
    if Path(spec).exists():
        return spec, []
    head, *rest = spec.split("+")
    name = head.partition("@")[0]
    if name in load_extension_pins():
        pin = _extension(head)
        return pin.base, [pin, *(_extension(part) for part in rest)]
    if any(not part for part in rest):
        raise CodegenError(f"{spec!r}: an empty extension name after '+'")
    return head, [_extension(part) for part in rest]


def _definitions(document: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    key = "$defs" if "$defs" in document else "definitions"
    defs = document.get(key)
    if not isinstance(defs, dict):
        raise CodegenError("the schema has no '$defs' or 'definitions' object")
    return key, defs


def _rebase(schema: Any, old: str, new: str) -> Any:
    """``schema`` with its local references rewritten from ``#/<old>/`` to ``#/<new>/``."""
    if old == new:
        return schema
    if isinstance(schema, dict):
        out = {k: _rebase(v, old, new) for k, v in schema.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith(f"#/{old}/"):
            out["$ref"] = f"#/{new}/" + ref.removeprefix(f"#/{old}/")
        return out
    if isinstance(schema, list):
        return [_rebase(v, old, new) for v in schema]
    return schema


def layer(base: LoadedSchema, extensions: list[ExtensionPin]) -> Layered:
    """``base`` with the definitions of ``extensions`` added (see the module docstring)."""
    if not extensions:
        return Layered(base, "", ())
    document = copy.deepcopy(base.document)
    key, defs = _definitions(document)
    notes: list[str] = []
    for pin in extensions:
        extension, _ = load_extension(pin)
        ext_key, ext_defs = _definitions(extension)
        added = 0
        differing = 0
        for name, schema in ext_defs.items():
            schema = _rebase(schema, ext_key, key)
            if name not in defs:
                defs[name] = schema
                added += 1
            elif defs[name] != schema:
                differing += 1
        note = f"{pin.label} ({pin.identifier}): {added} definitions added from {pin.path}"
        if differing:
            note += f"; {differing} of its copies of {base.revision} definitions differ, "
            note += f"{base.revision}'s kept"
        notes.append(note)
    suffix = "".join(f"+{pin.label}" for pin in extensions)
    loaded = LoadedSchema(
        revision=base.revision,
        document=document,
        sha256=base.sha256,
        source=base.source,
        pin=base.pin,
        folders=base.folders,
    )
    return Layered(loaded, suffix, tuple(notes))
