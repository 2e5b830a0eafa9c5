"""The generator: MCP ``schema.json`` -> typed Python bindings under ``generated/``.

A pipeline of plain stages, each a module of its own: ``load`` (pins and bytes) -> ``ir``
(definitions, method table, capabilities) -> ``emit`` (models, templates) -> ``format`` -> ``write``.
"""

from .errors import CodegenError
from .ir import RevisionIR, build_ir
from .load import LoadedSchema, load_file, load_revision
from .pipeline import generate, generate_revision

__all__ = [
    "CodegenError",
    "LoadedSchema",
    "RevisionIR",
    "build_ir",
    "generate",
    "generate_revision",
    "load_file",
    "load_revision",
]
