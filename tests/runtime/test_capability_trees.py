"""Capabilities are built from the generated ``methods.CAPABILITIES`` trees, not from the
capability classes (which a server would otherwise define at ``initialize``): the same bytes
the classes' fields gave, for every revision, side and path."""

from __future__ import annotations

import itertools
import typing
from collections.abc import Iterable, Iterator, Mapping
from typing import Annotated, Any

import orjson
import pytest
from mcpbind import generated
from mcpbind.generated.support import Direction
from mcpbind.runtime import Client, RequestContext, Server
from mcpbind.runtime.core.bindings import Bindings
from mcpbind.runtime.core.capabilities import capability_tree
from mcpbind.runtime.endpoints.endpoint import Endpoint
from pydantic import BaseModel

SIDES = {
    Direction.SERVER_TO_CLIENT: "ServerCapabilities",
    Direction.CLIENT_TO_SERVER: "ClientCapabilities",
}


def _shape(model: Any, name: str) -> tuple[bool, Any]:
    """Whether field ``name`` of ``model`` is a flag, and its sub-model: how capabilities were
    derived from the classes before the table."""
    fields = getattr(model, "model_fields", None)
    if not fields or name not in fields:
        return False, None
    args = typing.get_args(fields[name].annotation) or (fields[name].annotation,)
    args = tuple(typing.get_args(a)[0] if typing.get_origin(a) is Annotated else a for a in args)
    sub = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), None)
    return bool in args, sub


def _from_classes(paths: Iterable[str], model: Any) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in paths:
        node, cls = tree, model
        parts = path.split(".")
        for depth, part in enumerate(parts):
            is_flag, sub = _shape(cls, part)
            if depth == len(parts) - 1:
                if is_flag:
                    node[part] = True
                elif not isinstance(node.get(part), dict):
                    node[part] = {}
            else:
                if not isinstance(node.get(part), dict):
                    node[part] = {}
                node, cls = node[part], sub
    return tree


def _paths(tree: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    for name, member in tree.items():
        yield prefix + name
        if isinstance(member, Mapping):
            yield from _paths(member, f"{prefix}{name}.")


@pytest.mark.parametrize("revision", generated.REVISIONS)
@pytest.mark.parametrize("local", list(SIDES))
def test_every_path_builds_what_the_classes_built(revision: str, local: Direction) -> None:
    module = generated.load(revision)
    table = module.methods.CAPABILITIES[SIDES[local]]
    model = getattr(module.types, SIDES[local])
    paths = [*_paths(table), "experimental.custom", "unknown.deeper", "resources"]
    assert len(paths) >= 5
    for path in paths:
        assert orjson.dumps(capability_tree([path], table)) == orjson.dumps(
            _from_classes([path], model)
        ), path
    # Paths together (a parent before and after its flags) merge alike, in the same order.
    for pair in itertools.permutations(paths[:8], 2):
        ours = orjson.dumps(capability_tree(pair, table))
        assert ours == orjson.dumps(_from_classes(pair, model)), pair


async def _nothing(params: Any, context: RequestContext) -> Any:
    return {}


@pytest.mark.parametrize("revision", generated.REVISIONS)
@pytest.mark.parametrize("local", list(SIDES))
def test_an_endpoint_with_every_handler_advertises_the_same_bytes(
    revision: str, local: Direction
) -> None:
    """What ``initialize`` answers (a server) or sends (a client), derived from every handler
    the side may have: byte for byte what the classes gave, a flag ``true`` where one is."""
    bindings = Bindings.load(revision, local)
    endpoint: Endpoint = (
        Server("caps") if local is Direction.SERVER_TO_CLIENT else Client(Server("peer"))
    )
    paths = []
    for spec in bindings.incoming_requests.values():
        endpoint.add_handler(spec, _nothing)
        if bindings.remote in spec.capabilities:
            paths.append(spec.capabilities[bindings.remote])
    model = getattr(bindings.module.types, SIDES[local])
    derived = endpoint.capabilities_for(bindings)
    assert orjson.dumps(derived) == orjson.dumps(_from_classes(paths, model))
    assert paths
    # The classes accept it and give the same back.
    assert model.model_validate(derived).model_dump(by_alias=True, exclude_unset=True) == derived
    if local is Direction.SERVER_TO_CLIENT and revision != "2026-07-28":
        assert derived["resources"]["subscribe"] is True
