"""The generator: MCP ``schema.json`` -> typed Python bindings under ``generated/``.

A pipeline of plain stages, each a module of its own: ``load`` (pins and bytes) -> ``ir``
(definitions, method table, capabilities) -> ``emit`` (models, templates) -> ``format`` -> ``write``.
"""

from typing import TYPE_CHECKING, Any

from .errors import CodegenError
from .ir import RevisionIR, build_ir
from .load import LoadedSchema, load_file, load_revision

if TYPE_CHECKING:
    # What __getattr__ below gives, named for type checkers (and for __all__).
    from .pipeline import generate, generate_revision

# The pipeline imports the codegen extra (datamodel-code-generator, jinja2, black): loaded on
# first use, so `mcpbind diff` and `revisions` work after a plain `pip install mcpbind`.
_LAZY = {"generate", "generate_revision"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
