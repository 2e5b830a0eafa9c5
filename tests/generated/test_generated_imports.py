"""Every generated module imports, and every class a method table names can build a validator.

Models are ``defer_build``: a broken forward reference or a missing import only shows when a
TypeAdapter is built, so each table entry is built here rather than just imported.
"""

from __future__ import annotations

import importlib
from typing import Any

import mcpbind.generated
import pytest
from generated_helpers import REVISIONS, ir_of
from mcpbind.generated._support import MethodSpec, NotificationSpec
from pydantic import TypeAdapter

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
