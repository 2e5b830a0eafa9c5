"""A schema alias that names one model can be built by its own name (``types.EmptyResult()``).

Which definitions are such aliases is read from the IR (a definition that is only a ``$ref`` to
another), not from the generator's code, so a revision that adds one is covered without an edit.
Statically, mypy --strict must accept the call too (the checker reads the checkout through the
root's ``mcpbind/`` links, as ``tests/test_static_checks.py`` runs it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from generated_helpers import REVISIONS, ir_of, types_of
from mcpbind.codegen.ir.refs import ref_name
from mcpbind.generated.support import MCPModel

REPO_ROOT = Path(__file__).resolve().parents[2]
#: A value for each property a target model requires (2026-07-28's ``Result`` requires its
#: ``resultType``); a model that requires another one fails here until it is given one.
REQUIRED_VALUES = {"resultType": "complete"}


def model_aliases(revision: str) -> dict[str, str]:
    """Alias class name -> the class name of the one definition it names."""
    definitions = ir_of(revision).definitions
    found: dict[str, str] = {}
    for definition in definitions.values():
        target = ref_name(definition.schema)
        if target is not None and target in definitions:
            found[definition.class_name] = definitions[target].class_name
    return found


def test_every_revision_has_model_aliases() -> None:
    # EmptyResult is in every revision: a test that found none would check nothing.
    assert all("EmptyResult" in model_aliases(revision) for revision in REVISIONS)


@pytest.mark.parametrize("revision", REVISIONS)
def test_model_alias_is_built_by_its_name(revision: str) -> None:
    types = types_of(revision)
    definitions = ir_of(revision).definitions
    by_class = {d.class_name: d for d in definitions.values()}
    for alias, target in model_aliases(revision).items():
        cls = getattr(types, alias)
        assert cls is getattr(types, target), alias
        assert isinstance(cls, type) and issubclass(cls, MCPModel), alias
        required = by_class[target].schema.get("required", [])
        values = {name: REQUIRED_VALUES[name] for name in required if name != "_meta"}
        built = cls(**values)
        assert isinstance(built, getattr(types, target))
        assert cls.model_validate(built.model_dump()) == built
        with_meta = cls(meta={"k": 1}, **values)
        assert with_meta.model_dump(exclude_unset=True) == {"_meta": {"k": 1}, **values}


SNIPPET = """\
from mcpbind.generated.v2025_11_25 import types
from mcpbind.generated.v2026_07_28 import types as stateless


def ping() -> types.EmptyResult:
    return types.EmptyResult()


def answer() -> stateless.ClientResult:
    return stateless.ClientResult(resultType="complete")


def wrong() -> types.EmptyResult:
    return types.EmptyResult(1)  # error
"""


def test_mypy_accepts_building_an_alias(tmp_path: Path) -> None:
    source = tmp_path / "user.py"
    source.write_text(SNIPPET)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(source)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    expected = [n for n, line in enumerate(SNIPPET.splitlines(), 1) if line.endswith("# error")]
    assert sorted({int(line.split(":")[1]) for line in errors}) == expected, done.stdout
