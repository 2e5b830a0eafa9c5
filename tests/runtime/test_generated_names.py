"""Method names and ``_meta`` keys come from ``mcpbind.generated.names``, never typed by hand.

The runtime spells no string literal that equals a generated method name or ``_meta`` key
(docstrings and comments aside); the names module is the union of every generated revision's
method table, and importing it imports nothing heavy.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import pytest
from mcpbind import generated
from mcpbind.codegen.ir.extensions import EXTENSIONS
from mcpbind.generated import names
from mcpbind.generated.support import MethodSpec, NotificationSpec
from mcpbind.runtime.app._shaping import result_class
from pydantic import BaseModel

PROTOCOL_NAMES = names.REQUESTS | names.NOTIFICATIONS | names.META_KEYS
# Literals that equal a protocol name but are not one, by file name (a file may move between
# folders) and value. Each needs its reason, and an entry nothing needs any more fails.
NOT_PROTOCOL_NAMES = {
    ("_relay.py", "ping"): "the cluster relay's own keepalive marker between workers",
}
RESERVED_PREFIX = "io.modelcontextprotocol/"


def _docstrings(tree: ast.Module) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def protocol_literals(folder: Path, skip: tuple[str, ...] = ()) -> list[tuple[str, int, str]]:
    """``(file, line, value)`` of every string literal under ``folder`` that is a protocol name."""
    hits: list[tuple[str, int, str]] = []
    for path in sorted(folder.rglob("*.py")):
        relative = path.relative_to(folder).as_posix()
        if relative.startswith(skip):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), relative)
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in PROTOCOL_NAMES
                and id(node) not in docstrings
            ):
                hits.append((relative, node.lineno, node.value))
    return sorted(hits)


def object_keys(node: Any) -> Iterator[str]:
    """Every key of every object in a JSON document."""
    if isinstance(node, dict):
        yield from node
        for value in node.values():
            yield from object_keys(value)
    elif isinstance(node, list):
        for value in node:
            yield from object_keys(value)


def revision_tables() -> list[ModuleType]:
    return [
        importlib.import_module(f"{generated.module_name(r)}.methods") for r in generated.REVISIONS
    ]


def test_the_runtime_spells_no_method_name_or_meta_key(repo_root: Path) -> None:
    hits = protocol_literals(repo_root / "runtime")
    allowed = {(Path(f).name, value) for f, _, value in hits} & NOT_PROTOCOL_NAMES.keys()
    typed = [
        f"runtime/{f}:{line}: {value!r}"
        for f, line, value in hits
        if (Path(f).name, value) not in NOT_PROTOCOL_NAMES
    ]
    assert typed == [], "use the constants of mcpbind.generated.names:\n" + "\n".join(typed)
    assert allowed == NOT_PROTOCOL_NAMES.keys(), "an exception nothing needs any more"


def test_the_generator_names_methods_only_in_its_ir(repo_root: Path) -> None:
    # The IR states the few protocol facts it needs by name (``initialize``, the extensions).
    assert protocol_literals(repo_root / "codegen", skip=("ir/",)) == []


def test_the_walk_finds_a_literal_and_skips_docstrings(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        '"""Mentions "tools/call" freely."""\n'
        "# 'tools/call' in a comment\n"
        "def f(method: str) -> bool:\n"
        '    """tools/call"""\n'
        '    return method == "tools/call" or method == f"{method}/list"\n'
        'KEY = {"io.modelcontextprotocol/clientInfo": 1}\n'
    )
    assert protocol_literals(tmp_path) == [
        ("m.py", 5, "tools/call"),
        ("m.py", 6, "io.modelcontextprotocol/clientInfo"),
    ]


def test_every_method_of_every_revision_is_a_constant_of_the_same_name() -> None:
    requests: set[str] = set()
    notifications: set[str] = set()
    for table in revision_tables():
        for const, value in vars(table).items():
            if isinstance(value, MethodSpec | NotificationSpec):
                assert getattr(names, const) == value.method, (table.REVISION, const)
        requests |= set(table.METHODS)
        notifications |= set(table.NOTIFICATIONS)
        assert table.META_KEYS <= names.META_KEYS
    for extension in EXTENSIONS:
        requests |= set(extension.requests)
        notifications |= set(extension.notifications)
    assert requests == names.REQUESTS
    assert notifications == names.NOTIFICATIONS
    assert names.TOOLS_CALL == "tools/call"
    assert names.NOTIFICATIONS_TASKS == "notifications/tasks"
    assert names.TASKS_UPDATE in names.REQUESTS


def test_the_meta_keys_are_those_the_schemas_name(schema_dir: Path) -> None:
    stateless = {
        names.META_PROTOCOL_VERSION: "io.modelcontextprotocol/protocolVersion",
        names.META_CLIENT_INFO: "io.modelcontextprotocol/clientInfo",
        names.META_CLIENT_CAPABILITIES: "io.modelcontextprotocol/clientCapabilities",
        names.META_SERVER_INFO: "io.modelcontextprotocol/serverInfo",
    }
    assert all(const == value for const, value in stateless.items())
    named: set[str] = set()
    for table in revision_tables():
        schema = json.loads((schema_dir / table.REVISION / "schema.json").read_bytes())
        declared = {key for key in object_keys(schema) if key.startswith(RESERVED_PREFIX)}
        assert declared <= table.META_KEYS, table.REVISION
        named |= table.META_KEYS
    assert set(stateless) <= named
    assert names.META_RELATED_TASK in named  # 2025-11-25 names it in prose only
    assert named == names.META_KEYS


def test_names_are_final_strings() -> None:
    constants = {k: v for k, v in vars(names).items() if k.isupper() and not k.startswith("_")}
    aggregates = {"REQUESTS", "NOTIFICATIONS", "META_KEYS"}
    for const, value in constants.items():
        annotation = names.__annotations__[const]
        if const in aggregates:
            assert annotation == "Final[frozenset[str]]"
        else:
            assert type(value) is str and annotation == "Final", const
    assert set(names.__all__) == set(constants)


def test_importing_the_names_imports_no_pydantic() -> None:
    probe = (
        "import sys, mcpbind.generated.names; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'mcpbind')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = ast.literal_eval(done.stdout)
    assert loaded == ["mcpbind", "mcpbind.generated", "mcpbind.generated.names"]


@pytest.mark.parametrize("revision", generated.REVISIONS)
def test_a_revision_uses_the_public_support_module(revision: str) -> None:
    table = importlib.import_module(f"{generated.module_name(revision)}.methods")
    assert MethodSpec.__module__ == "mcpbind.generated.support"
    assert all(isinstance(spec, MethodSpec) for spec in table.METHODS.values())
    assert "mcpbind.generated._support" not in sys.modules


@pytest.mark.parametrize("revision", generated.REVISIONS)
def test_a_specs_result_members_are_its_result_class_fields(revision: str) -> None:
    """``MethodSpec.result_members``, which the app shapes plain results by without creating
    the result's class, are that class's members on the wire, in its serializer's order."""
    listed = 0
    for spec in generated.load(revision).METHODS.values():
        if spec.result_members is None:
            continue
        cls = result_class(spec.result_type)
        fields = tuple((f.alias or name) for name, f in cls.model_fields.items())
        assert spec.result_members == fields, (spec.method, fields)
        listed += 1
    assert listed >= 5


def _tree_of(model: Any) -> dict[str, Any]:
    """A capability class's tree as ``methods.CAPABILITIES`` lists it, read from its fields: a
    member that may be a boolean is ``True``, one that may be a model that model's tree, any
    other ``{}``."""
    tree: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        args = typing.get_args(field.annotation) or (field.annotation,)
        args = tuple(
            typing.get_args(a)[0] if typing.get_origin(a) is Annotated else a for a in args
        )
        sub = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), None)
        tree[field.alias or name] = True if bool in args else _tree_of(sub) if sub else {}
    return tree


@pytest.mark.parametrize("revision", generated.REVISIONS)
def test_the_capability_trees_are_the_capability_classes_fields(revision: str) -> None:
    """``methods.CAPABILITIES``, which capabilities are built from without defining the
    classes (``core.capabilities.capability_tree``), says of every member of each side's
    capability class what its field says: a flag, or an object and its members."""
    module = generated.load(revision)
    sides = module.methods.CAPABILITIES
    assert set(sides) == {"ClientCapabilities", "ServerCapabilities"}
    for side, tree in sides.items():
        assert tree == _tree_of(getattr(module.types, side)), side
    assert sides["ServerCapabilities"]["resources"]["subscribe"] is True
