"""Each generated class is defined the first time it is used, and then behaves as it always did.

``types.py`` defines a class on first use (``support.define_on_use``), ``types.pyi`` holds the same
classes for type checkers, and a method table names its classes with ``deferred``. Checked here:
what one import defines, identity, ``dir`` and ``__all__``, pickling, threads, the stub's names, the
JSON schema of every class against the stub's own class (the stub is valid Python, run here as a
module), and the specs' deferred fields.
"""

from __future__ import annotations

import ast
import importlib.util
import pickle
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import mcpbind.generated
import pytest
from generated_helpers import REVISIONS, types_of
from mcpbind.generated.support import Direction, MethodSpec, NotificationSpec, deferred
from pydantic import BaseModel, TypeAdapter

_DEFINED_PROBE = """
import sys
from mcpbind.generated.v2025_11_25.types import Tool
import mcpbind.generated.v2025_11_25.types as types
print(",".join(sorted(n for n in types.__all__ if n in vars(types))))
"""


def test_importing_one_class_defines_what_it_reaches_only() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _DEFINED_PROBE], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out.split(",") == [
        "Icon",
        "Tool",
        "ToolAnnotations",
        "ToolExecution",
        "ToolInputSchema",
        "ToolOutputSchema",
    ]


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_name_is_listed_and_defined_once(revision: str) -> None:
    types = types_of(revision)
    names = types.__all__
    assert set(names) <= set(dir(types))
    first = {name: getattr(types, name) for name in names}
    assert all(getattr(types, name) is first[name] for name in names)
    star: dict[str, Any] = {}
    exec(f"from {types.__name__} import *", star)
    assert {n: v for n, v in star.items() if n in first} == first
    with pytest.raises(AttributeError):
        types.NoSuchClass  # noqa: B018


@pytest.mark.parametrize("revision", REVISIONS)
def test_classes_pickle_by_their_module_name(revision: str) -> None:
    types = types_of(revision)
    for name in types.__all__:
        cls = getattr(types, name)
        if isinstance(cls, type) and cls.__name__ == name:
            assert cls.__qualname__ == name and cls.__module__ == types.__name__
            assert pickle.loads(pickle.dumps(cls)) is cls
    result = types.CallToolResult(content=[types.TextContent(text="hi")])
    again = pickle.loads(pickle.dumps(result))
    assert again == result and type(again.content[0]) is types.TextContent


_THREADS_PROBE = """
import threading
import mcpbind.generated.v2025_11_25 as package
barrier = threading.Barrier(8)
seen = []
def ask():
    barrier.wait()
    seen.append(package.types.CallToolResult)
threads = [threading.Thread(target=ask) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(len(seen), len({id(cls) for cls in seen}))
"""


def test_threads_asking_at_once_get_one_class() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _THREADS_PROBE], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["8", "1"]


def _stub_names(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            names.append(node.targets[0].id)
    return [n for n in names if n != "__all__"]


def _stub_module(revision: str) -> ModuleType:
    """The revision's ``types.pyi`` run as a module of its own (every class at the top level)."""
    types = types_of(revision)
    path = Path(types.__file__ or "").with_suffix(".pyi")
    name = f"_stub_{revision.replace('-', '_')}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_stub_defines_what_the_module_lists(revision: str) -> None:
    types = types_of(revision)
    path = Path(types.__file__ or "").with_suffix(".pyi")
    assert sorted(_stub_names(path)) == types.__all__


def _enums_as_sets(schema: Any) -> Any:
    """``schema`` with each ``enum`` list a set. typing caches ``Literal[...] | None`` by equal
    arguments, and ``Literal["dark", "light"]`` equals ``Literal["light", "dark"]``: a class
    defined after any library wrote the same values in another order gets that order (the same
    values, the same JSON Schema meaning)."""
    if isinstance(schema, dict):
        return {
            key: frozenset(value) if key == "enum" else _enums_as_sets(value)
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [_enums_as_sets(item) for item in schema]
    return schema


@pytest.mark.parametrize("revision", REVISIONS)
def test_json_schemas_match_the_stubs_classes(revision: str) -> None:
    types, stub = types_of(revision), _stub_module(revision)
    for name in types.__all__:
        lazy, eager = getattr(types, name), getattr(stub, name)
        if isinstance(lazy, type) and issubclass(lazy, BaseModel):
            lazy_schema, eager_schema = lazy.model_json_schema(), eager.model_json_schema()
            assert _enums_as_sets(lazy_schema) == _enums_as_sets(eager_schema), name
            assert lazy.__doc__ is None or (
                " ".join(lazy.__doc__.split()) == " ".join((eager.__doc__ or "").split())
            )


def test_method_table_names_its_classes_on_first_read() -> None:
    types = mcpbind.generated.load("2025-11-25").types
    tools_list = mcpbind.generated.load("2025-11-25").methods.TOOLS_LIST
    assert tools_list.item_type is types.Tool
    assert tools_list.result_type is types.ListToolsResult
    assert tools_list.params_type is types.PaginatedRequestParams
    assert "__deferred__" in vars(tools_list)
    again = pickle.loads(pickle.dumps(tools_list))
    assert again == tools_list and "__deferred__" not in vars(again)


def test_a_deferred_field_resolves_once_and_hashing_resolves_none() -> None:
    calls: list[str] = []

    def result() -> type[BaseModel]:
        calls.append("result")
        return BaseModel

    spec: MethodSpec[None, BaseModel] = MethodSpec(
        revision="r",
        method="m",
        handler_name="m",
        directions=frozenset({Direction.CLIENT_TO_SERVER}),
        request_type=None,
        params_type=None,
        params_required=False,
        result_type=deferred(result),
        result_link="naming",
    )
    hash(spec)
    assert calls == []
    assert spec.result_type is BaseModel and spec.result_type is BaseModel
    assert calls == ["result"]
    assert MethodSpec.task_result_type is None
    eager = NotificationSpec[None](
        revision="r",
        method="n",
        handler_name="n",
        directions=frozenset({Direction.CLIENT_TO_SERVER}),
        notification_type=BaseModel,
        params_type=None,
        params_required=False,
    )
    assert eager.notification_type is BaseModel and "__deferred__" not in vars(eager)


def _fresh_types(revision: str, tag: str) -> ModuleType:
    """A new copy of the revision's ``types`` module, nothing defined yet (in the revision's
    package, where it finds the modules of its definitions)."""
    types = types_of(revision)
    path = Path(types.__file__ or "")
    name = f"{types.__package__}._fresh_{tag}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("revision", REVISIONS)
def test_each_name_builds_from_what_it_reaches_alone(revision: str) -> None:
    """What a name reaches is enough to build it: every class a field names (quoted or not) is
    defined with it, so pydantic resolves it. Each name in a fresh copy of the module."""
    for name in types_of(revision).__all__:
        module = _fresh_types(revision, name)
        try:
            value = getattr(module, name)
            TypeAdapter(value).core_schema  # noqa: B018 - building it is the test
        finally:
            del sys.modules[module.__name__]
