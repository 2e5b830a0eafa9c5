"""Every generated module imports, and every class a method table names can build a validator.

Models are ``defer_build``: a broken forward reference or a missing import only shows when a
TypeAdapter is built, so each table entry is built here rather than just imported.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from typing import Any

import mcpbind.generated
import pytest
from generated_helpers import REVISIONS, ir_of
from mcpbind.generated.support import MethodSpec, NotificationSpec
from pydantic import BaseModel, TypeAdapter

MODULES = ("types", "methods", "client", "server")


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("module", MODULES)
def test_module_imports(revision: str, module: str) -> None:
    importlib.import_module(f"{mcpbind.generated.module_name(revision)}.{module}")


@pytest.mark.parametrize("revision", REVISIONS)
def test_load(revision: str) -> None:
    package = mcpbind.generated.load(revision)
    assert revision == package.REVISION
    for module in MODULES:
        assert hasattr(package, module)


def test_load_of_unknown_revision() -> None:
    with pytest.raises(LookupError):
        mcpbind.generated.load("1999-01-01")


def _adapt(value: Any) -> None:
    TypeAdapter(value).core_schema  # noqa: B018 - building it is the test


@pytest.mark.parametrize("revision", REVISIONS)
def test_method_specs_build_adapters(revision: str) -> None:
    package = mcpbind.generated.load(revision)
    assert set(package.METHODS) == {m.method for m in ir_of(revision).methods}
    for spec in package.METHODS.values():
        assert isinstance(spec, MethodSpec)
        _adapt(spec.request_type)
        _adapt(spec.result_type)
        if spec.params_type is not None:
            _adapt(spec.params_type)


@pytest.mark.parametrize("revision", REVISIONS)
def test_notification_specs_build_adapters(revision: str) -> None:
    package = mcpbind.generated.load(revision)
    assert set(package.NOTIFICATIONS) == {n.method for n in ir_of(revision).notifications}
    for spec in package.NOTIFICATIONS.values():
        assert isinstance(spec, NotificationSpec)
        _adapt(spec.notification_type)
        if spec.params_type is not None:
            _adapt(spec.params_type)


_IMPORT_PROBE = """
import sys
from mcpbind.generated import load
from pydantic import BaseModel
types = load(sys.argv[1]).types
def models():
    return [
        value
        for value in vars(types).values()
        if isinstance(value, type)
        and issubclass(value, BaseModel)
        and value.__module__ == types.__name__
    ]
print(len(models()))
for name in types.__all__:
    getattr(types, name)
models = models()
print(len(models))
print(",".join(m.__name__ for m in models if not m.__pydantic_fields_complete__))
print(",".join(m.__name__ for m in models if m.__pydantic_complete__))
"""


@pytest.mark.parametrize("revision", REVISIONS)
def test_import_resolves_every_field_and_builds_no_model(revision: str) -> None:
    """Importing a revision (its package: types, method table, stubs) creates no model class;
    every annotation resolves when its class is created (so the base class sees each field's
    alias and constant), and creating every class builds no validator: that waits for first
    use."""
    out = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE, revision],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert int(out[0]) == 0, f"{out[0]} model classes created at import"
    assert int(out[1]) > 50
    assert out[2] == "", f"fields left unresolved: {out[2]}"
    assert out[3] == "", f"models built before use: {out[3]}"


@pytest.mark.parametrize("revision", REVISIONS)
def test_base_class_tables_match_the_built_fields(revision: str) -> None:
    types = mcpbind.generated.load(revision).types
    for value in (getattr(types, name) for name in types.__all__):
        if not (isinstance(value, type) and issubclass(value, BaseModel)):
            continue
        fields = value.model_fields
        aliases = {n: f.alias for n, f in fields.items() if f.alias is not None and f.alias != n}
        assert value.__aliases__ == aliases, value.__name__
