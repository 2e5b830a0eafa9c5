"""Extension schemas as layers over a revision: ``2026-07-28+tasks``, ``tasks@2026-05-22``.

A side of ``mcpbind diff`` may name pinned extensions after its revision, each ``+name`` or
``+name@version`` (the newest pinned version when none is given); a side that is an extension
alone (``tasks@2026-05-22``) is that extension over the revision it extends (its pin's ``base``).
The extension's definitions are added to the revision's. Extension schemas carry copies of core
definitions (``Tool``, ``Result``...): a name the revision already defines keeps the revision's
definition, and a note counts the copies that differ, so two versions of an extension over the
same revision differ only where the extension's own definitions do.

An extension whose methods mcpbind knows (``codegen.ir.extensions``: the tasks extension) also
joins the method table: its requests are added to ``ClientRequest`` and its notifications to
``ServerNotification`` (the extension's client sends the one and its server the other), each
with its ``allOf`` merged, as the diff reads it anyway, so that the IR finds the method name.
The requests of other extensions (MCP Apps' ``ui/*``, between a view and its host, not on the
MCP wire) are compared as definitions only. An extension's methods are used only between parties
that both declared it in ``capabilities.extensions`` (2026-07-28, basic/versioning: extension
negotiation), so ``gate`` makes the IR say so: each is gated by ``extensions.<identifier>``.

``Layered.origins`` names what each extension brought (``origins.py`` attributes changes by it).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import CodegenError
from ..ir import RevisionIR
from ..ir.extensions import EXTENSIONS
from ..ir.refs import const_of, union_members
from ..jsonvalues import is_array, is_object
from ..load import LoadedSchema, load_extension
from ..pins import ExtensionPin, get_extension_pin, load_extension_pins
from .methods import EXTENSION_GATE
from .origins import Origins
from .shapes import effective

__all__ = ["Layered", "gate", "layer", "split_spec"]


@dataclass(frozen=True)
class Layered:
    """A loaded side with its extensions merged in, and what the merge has to say."""

    loaded: LoadedSchema
    label_suffix: str
    notes: tuple[str, ...]
    origins: Origins = field(default_factory=Origins)
    #: Request method -> the capability that gates it (``EXTENSION_GATE``), for ``gate``.
    gates: dict[str, str] = field(default_factory=dict[str, str])


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
    if not is_object(defs):
        raise CodegenError("the schema has no '$defs' or 'definitions' object")
    return key, defs


def _rebase(schema: Any, old: str, new: str) -> Any:
    """``schema`` with its local references rewritten from ``#/<old>/`` to ``#/<new>/``."""
    if old == new:
        return schema
    if is_object(schema):
        out = {k: _rebase(v, old, new) for k, v in schema.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith(f"#/{old}/"):
            out["$ref"] = f"#/{new}/" + ref.removeprefix(f"#/{old}/")
        return out
    if is_array(schema):
        return [_rebase(v, old, new) for v in schema]
    return schema


def _add_member(defs: dict[str, Any], key: str, union: str, name: str) -> None:
    """Add ``name`` to the union definition ``union`` (a one-member union may be a ``$ref`` or
    an inline copy of its member: it becomes an ``anyOf``)."""
    ref = {"$ref": f"#/{key}/{name}"}
    schema = defs.get(union)
    if is_object(schema) and union_members(schema):
        defs[union] = {**schema, "anyOf": [*schema["anyOf"], ref]}
        return
    members = []
    if is_object(schema) and "$ref" in schema:
        members = [schema]
    elif is_object(schema):
        copied = next((n for n, other in defs.items() if n != union and other == schema), None)
        members = [{"$ref": f"#/{key}/{copied}"}] if copied else []
    defs[union] = {"anyOf": [*members, ref]}


def _wire(defs: dict[str, Any], key: str, pin: ExtensionPin, added: list[str]) -> dict[str, str]:
    """Join the known methods among ``added`` to the revision's unions; method -> its union."""
    known = next((e for e in EXTENSIONS if e.identifier == pin.identifier), None)
    if known is None:
        return {}
    wired: dict[str, str] = {}
    for name in added:
        flat = effective(defs[name], defs)
        method = const_of(flat, "method")
        if method in known.requests:
            union = "ClientRequest"
        elif method in known.notifications:
            union = "ServerNotification"
        else:
            continue
        defs[name] = flat
        _add_member(defs, key, union, name)
        wired[method] = union
    return dict(sorted(wired.items()))


def layer(base: LoadedSchema, extensions: list[ExtensionPin]) -> Layered:
    """``base`` with the definitions of ``extensions`` added (see the module docstring)."""
    if not extensions:
        return Layered(base, "", ())
    document = copy.deepcopy(base.document)
    key, defs = _definitions(document)
    notes: list[str] = []
    definitions: dict[str, str] = {}
    methods: dict[str, str] = {}
    gates: dict[str, str] = {}
    for pin in extensions:
        extension, _ = load_extension(pin)
        ext_key, ext_defs = _definitions(extension)
        added: list[str] = []
        differing = 0
        for name, schema in ext_defs.items():
            schema = _rebase(schema, ext_key, key)
            if name not in defs:
                defs[name] = schema
                added.append(name)
            elif defs[name] != schema:
                differing += 1
        wired = _wire(defs, key, pin, added)
        definitions.update(dict.fromkeys(added, pin.label))
        methods.update(dict.fromkeys(wired, pin.label))
        gate_path = EXTENSION_GATE + pin.identifier
        gates.update((m, gate_path) for m, union in wired.items() if union == "ClientRequest")
        note = f"{pin.label} ({pin.identifier}): {len(added)} definitions added from {pin.path}"
        if wired:
            note += f"; methods {', '.join(wired)}"
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
    origins = Origins(definitions, methods)
    return Layered(loaded, suffix, tuple(notes), origins, gates)


def gate(ir: RevisionIR, layered: Layered) -> RevisionIR:
    """``ir`` with each extension method gated by its extension's capability, in every
    direction it is sent (both parties must have declared the extension)."""
    if not layered.gates:
        return ir
    methods = tuple(
        replace(m, capabilities=tuple((d, layered.gates[m.method]) for d in m.directions))
        if m.method in layered.gates
        else m
        for m in ir.methods
    )
    return replace(ir, methods=methods)
