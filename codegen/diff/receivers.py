"""Who receives which definition: the message flows each definition travels on.

Walks ``$ref``s from the method table: a request (and what it references) travels in the method's
directions, its results (and their response envelopes) the opposite way, a notification in its
own directions; the message unions (``ClientRequest``, ``ServerResult``...) travel the way their
name says, and the JSON-RPC envelope (``JSONRPCMessage``) and typed error responses (a definition
with ``jsonrpc`` and ``error``) both ways. A definition reached from several places travels
every way it is reached; one reached from nowhere gets no flow (see ``Finding.flows``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..ir import Direction, ResultLink, RevisionIR
from ..ir.methods import NOTIFICATION_UNIONS, REQUEST_UNIONS
from ..ir.refs import ref_name
from ..jsonvalues import JSONObject, is_array, is_object

ENVELOPE_ROOTS = ("JSONRPCMessage",)
RESULT_UNIONS = (
    ("ClientResult", Direction.CLIENT_TO_SERVER),
    ("ServerResult", Direction.SERVER_TO_CLIENT),
)
_OPPOSITE = {
    Direction.CLIENT_TO_SERVER: Direction.SERVER_TO_CLIENT,
    Direction.SERVER_TO_CLIENT: Direction.CLIENT_TO_SERVER,
}

Flows = dict[str, frozenset[Direction]]


def opposite(direction: Direction) -> Direction:
    return _OPPOSITE[direction]


def _refs(node: Any) -> Iterator[str]:
    if is_object(node):
        target = ref_name(node)
        if target is not None:
            yield target
        for value in node.values():
            yield from _refs(value)
    elif is_array(node):
        for value in node:
            yield from _refs(value)


def references(ir: RevisionIR) -> dict[str, frozenset[str]]:
    """Each definition's direct references (to definitions that exist)."""
    return {
        name: frozenset(r for r in _refs(d.schema) if r in ir.definitions)
        for name, d in ir.definitions.items()
    }


def _roots(ir: RevisionIR) -> Iterator[tuple[str, Direction]]:
    for method in ir.methods:
        for direction in method.directions:
            yield method.request, direction
            for result in method.results:
                yield result, opposite(direction)
            if method.result_link is ResultLink.RESPONSE_ENVELOPE:
                stem = method.request.removesuffix("Request")
                yield f"{stem}ResultResponse", opposite(direction)
    for notification in ir.notifications:
        for direction in notification.directions:
            yield notification.notification, direction
    yield from REQUEST_UNIONS
    yield from NOTIFICATION_UNIONS
    yield from RESULT_UNIONS
    for name, definition in ir.definitions.items():
        props: JSONObject = definition.schema.get("properties") or {}
        if name in ENVELOPE_ROOTS or ("jsonrpc" in props and "error" in props):
            yield from ((name, d) for d in Direction)


def _reach(start: str, graph: dict[str, frozenset[str]]) -> Iterable[str]:
    seen = {start}
    stack = [start]
    while stack:
        for target in graph.get(stack.pop(), frozenset()):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def flows(ir: RevisionIR) -> Flows:
    """Definition name -> the directions it travels in (absent: carried by no message)."""
    graph = references(ir)
    found: dict[str, set[Direction]] = {}
    reached: dict[str, Iterable[str]] = {}
    for root, direction in _roots(ir):
        if root not in ir.definitions:
            continue
        if root not in reached:
            reached[root] = _reach(root, graph)
        for name in reached[root]:
            found.setdefault(name, set()).add(direction)
    return {name: frozenset(directions) for name, directions in found.items()}
