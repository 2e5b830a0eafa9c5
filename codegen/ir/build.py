"""Stage 2 of the pipeline: a loaded schema document -> RevisionIR."""

from __future__ import annotations

import copy

from ..errors import CodegenError
from ..load import LoadedSchema
from .capabilities import build_capabilities
from .fixups import apply_fixups
from .hoist import hoist_definitions
from .meta import reserved_meta_keys
from .methods import build_methods, build_notifications
from .model import Definition, Era, Method, RevisionIR
from .refs import definitions_of

# Names a generated module imports itself; a definition of that name is emitted as <Name>Model.
RESERVED_CLASS_NAMES = frozenset(
    {"Annotated", "Any", "BaseModel", "ConfigDict", "Field", "Literal", "RootModel", "TypeAlias"}
)


def class_name_for(name: str) -> str:
    return f"{name}Model" if name in RESERVED_CLASS_NAMES else name


def _era(methods: tuple[Method, ...], revision: str) -> Era:
    names = {m.method for m in methods}
    if "initialize" in names:
        return Era.HANDSHAKE
    if "server/discover" in names:
        return Era.STATELESS
    raise CodegenError(
        f"revision {revision}: neither 'initialize' nor 'server/discover': unknown era"
    )


def build_ir(loaded: LoadedSchema, *, fixups: bool = True) -> RevisionIR:
    """The IR of ``loaded``; ``fixups=False`` keeps the upstream bytes' defects (``diff --raw``)."""
    defs = copy.deepcopy(definitions_of(loaded.document))
    applied = apply_fixups(defs) if fixups else ()
    hoisted = hoist_definitions(defs)
    definitions = {
        name: Definition(name, class_name_for(name), schema, origin)
        for name, (schema, origin) in hoisted.items()
    }
    schemas = {name: d.schema for name, d in definitions.items()}
    methods = build_methods(schemas)
    return RevisionIR(
        revision=loaded.revision,
        era=_era(methods, loaded.revision),
        sha256=loaded.sha256,
        spec_commit=loaded.pin.spec_commit if loaded.pin else None,
        source=loaded.source,
        definitions=definitions,
        methods=methods,
        notifications=build_notifications(schemas),
        capabilities=build_capabilities(schemas),
        fixups=applied,
        meta_keys=reserved_meta_keys(schemas),
    )
