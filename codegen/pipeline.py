"""The generator as one pipeline: load and pin -> IR -> emit -> format -> write.

Each stage is a module of its own (``load``, ``ir``, ``emit``, ``format``, ``write``); this module
only strings them together, so that the CLI, the tests and the benchmark run the same path.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from .emit.models import emit_models
from .emit.names_module import names_of, read_names
from .emit.render import (
    RevisionSummary,
    render_revision_modules,
    render_shared_modules,
    support_source,
)
from .format import format_python, revision_header, shared_header, with_header
from .ir import RevisionIR, build_ir
from .load import LoadedSchema
from .write import existing_revisions, package_dir

__all__ = ["RevisionOutput", "generate", "generate_revision", "package_dir"]


@dataclass(frozen=True)
class RevisionOutput:
    ir: RevisionIR
    files: dict[str, str]


def generate_revision(loaded: LoadedSchema) -> RevisionOutput:
    """All files of one revision package, formatted, keyed by path relative to ``generated/``."""
    ir = build_ir(loaded)
    header = revision_header(ir.revision, ir.spec_commit, ir.sha256)
    models = emit_models(ir)
    modules = {
        "types.pyi": models.stub,
        "types.py": models.runtime,
        **{f"{name}.py": source for name, source in models.families.items()},
        **render_revision_modules(ir),
    }
    folder = package_dir(ir.revision)
    files = {
        f"{folder}/{name}": format_python(with_header(header, source))
        for name, source in modules.items()
    }
    return RevisionOutput(ir, files)


def generate(
    loaded: list[LoadedSchema],
    out: Path,
    keep: Collection[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, str]:
    """Every file to write under ``out`` for ``loaded``, shared modules included.

    The revision index, and the names module, cover the revisions generated now and those
    already under ``out`` (only those in ``keep`` when given: a revision whose pin was removed
    leaves the index); a revision kept but not regenerated gives its names from its own
    ``methods.py``. ``support.py`` is the generator's own source, copied as it is: no header,
    no formatting, so the copy is byte for byte the file the checkers read.
    ``progress`` is told each revision before its generation starts.
    """
    outputs: list[RevisionOutput] = []
    for schema in loaded:
        if progress is not None:
            progress(schema.revision)
        outputs.append(generate_revision(schema))
    eras = {r: e for r, e in existing_revisions(out).items() if keep is None or r in keep}
    eras.update({o.ir.revision: o.ir.era.value for o in outputs})
    summaries = [RevisionSummary(name, era) for name, era in sorted(eras.items())]
    fresh = {o.ir.revision: names_of(o.ir) for o in outputs}
    names = [
        fresh.get(name) or read_names(name, out / package_dir(name) / "methods.py")
        for name in sorted(eras)
    ]
    header = shared_header([s.name for s in summaries])
    files = {
        relative: format_python(with_header(header, text))
        for relative, text in render_shared_modules(summaries, names).items()
    }
    files["support.py"] = support_source()
    files["py.typed"] = ""
    for output in outputs:
        files.update(output.files)
    return files
