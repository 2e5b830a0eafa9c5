"""Infer the method table from the schema's unions; no method is listed by hand.

Directions come from the ``ClientRequest``/``ServerRequest`` unions (and 2026-07-28's
``InputRequest``, the requests a server embeds in an input-required result) and from the
``ClientNotification``/``ServerNotification`` unions. A method only the ``InputRequest`` union
holds is an input request: a server never sends it on its own (its stub does not offer it).
A request's result is found, in order: from its response envelope (``<X>ResultResponse.result``),
by naming (``<X>Request`` -> ``<X>Result``), else ``EmptyResult``. The capability guarding a
method is the receiver's capability named by the method's first segment (``tools/call`` ->
``tools``; ``resources/subscribe`` -> ``resources.subscribe``).

A request is task-augmentable when its params (each member, for a union of params) take a
``task`` property: it then returns the one result that carries nothing but a ``task``
(``CreateTaskResult``), and the receiver says it accepts that form under its capabilities'
``tasks.requests.<first segment>.<second segment>`` (``tools/call`` -> ``tasks.requests.tools.call``).
"""

from __future__ import annotations

from typing import Any

from ..errors import CodegenError
from ..jsonvalues import is_object
from .model import Direction, JSONSchema, Method, Notification, ResultLink
from .refs import const_of, ref_name, union_members

INPUT_REQUEST_UNION = "InputRequest"
REQUEST_UNIONS: tuple[tuple[str, Direction], ...] = (
    ("ClientRequest", Direction.CLIENT_TO_SERVER),
    ("ServerRequest", Direction.SERVER_TO_CLIENT),
    (INPUT_REQUEST_UNION, Direction.SERVER_TO_CLIENT),
)
NOTIFICATION_UNIONS: tuple[tuple[str, Direction], ...] = (
    ("ClientNotification", Direction.CLIENT_TO_SERVER),
    ("ServerNotification", Direction.SERVER_TO_CLIENT),
)
# The messages of the handshake itself, which a session's lifecycle sends, never its user. The
# schema marks no method as such; this is the one protocol fact the IR states by name.
LIFECYCLE_METHODS = frozenset({"initialize", "notifications/initialized"})

RECEIVER_CAPABILITIES = {
    Direction.CLIENT_TO_SERVER: "ServerCapabilities",
    Direction.SERVER_TO_CLIENT: "ClientCapabilities",
}


def message_members(defs: dict[str, JSONSchema], union: str) -> list[str]:
    """The message definitions of a union definition.

    A TypeScript union of one member is emitted without ``anyOf``: as a ``$ref`` to the member,
    or as the member's schema copied inline (2026-07-28's ``ClientNotification`` is a copy of
    ``CancelledNotification``). The copy resolves to the definition it equals, else to itself.
    """
    schema = defs.get(union)
    members = union_members(schema)
    if members or not is_object(schema):
        return members
    target = ref_name(schema)
    if target is not None:
        return [target]
    if const_of(schema, "method") is None:
        return []
    copies = [name for name, other in defs.items() if name != union and other == schema]
    return copies[:1] or [union]


def _members_by_direction(
    defs: dict[str, JSONSchema], unions: tuple[tuple[str, Direction], ...]
) -> dict[str, list[Direction]]:
    found: dict[str, list[Direction]] = {}
    for union, direction in unions:
        for member in message_members(defs, union):
            directions = found.setdefault(member, [])
            if direction not in directions:
                directions.append(direction)
    return found


def _method_name(defs: dict[str, JSONSchema], definition: str) -> str:
    method = const_of(defs.get(definition), "method")
    if not isinstance(method, str):
        raise CodegenError(
            f"definition {definition} is in a message union but has no const 'method'"
        )
    return method


def _params(defs: dict[str, JSONSchema], definition: str) -> tuple[str | None, bool]:
    schema = defs[definition]
    node = schema.get("properties", {}).get("params")
    if node is None:
        return None, False
    return ref_name(node), "params" in schema.get("required", [])


def _stem(definition: str, suffix: str) -> str:
    return definition[: -len(suffix)] if definition.endswith(suffix) else definition


def _results(defs: dict[str, JSONSchema], request: str) -> tuple[tuple[str, ...], ResultLink]:
    stem = _stem(request, "Request")
    envelope = defs.get(f"{stem}ResultResponse")
    if envelope is not None:
        node: Any = envelope.get("properties", {}).get("result")
        names = union_members(node) or [n for n in [ref_name(node)] if n]
        if names:
            primary = f"{stem}Result"
            ordered = sorted(names, key=lambda n: (n != primary, n))
            return tuple(ordered), ResultLink.RESPONSE_ENVELOPE
    if f"{stem}Result" in defs:
        return (f"{stem}Result",), ResultLink.NAMING
    if "EmptyResult" in defs:
        return ("EmptyResult",), ResultLink.EMPTY_RESULT
    raise CodegenError(f"no result found for request {request}, and the schema has no EmptyResult")


def _capability_flags(defs: dict[str, JSONSchema], definition: str) -> dict[str, JSONSchema]:
    schema = defs.get(definition, {})
    props = schema.get("properties", {})
    return props if is_object(props) else {}


def _capability(defs: dict[str, JSONSchema], method: str, direction: Direction) -> str | None:
    segments = method.split("/")
    if len(segments) < 2:
        return None
    flags = _capability_flags(defs, RECEIVER_CAPABILITIES[direction])
    for name in (segments[0], segments[0] + "s"):
        if name in flags:
            target = ref_name(flags[name])
            sub = _capability_flags(defs, target) if target else {}
            if segments[1] in sub:
                return f"{name}.{segments[1]}"
            return name
    return None


def _params_members(defs: dict[str, JSONSchema], params: str | None) -> list[str]:
    """The object definitions a request's params may be: the params themselves, or each member
    of a params union (2025-11-25's ``ElicitRequestParams``, form or URL)."""
    if params is None:
        return []
    return union_members(defs.get(params)) or [params]


def _takes_task(defs: dict[str, JSONSchema], params: str | None) -> bool:
    members = _params_members(defs, params)
    return bool(members) and all(
        "task" in defs.get(member, {}).get("properties", {}) for member in members
    )


def _task_result(defs: dict[str, JSONSchema]) -> str:
    """The result a task-augmented request returns: the one result whose only required member
    is a ``task`` object (``CreateTaskResult``)."""
    found = [
        name
        for name, schema in defs.items()
        if name.endswith("Result")
        and schema.get("required") == ["task"]
        and ref_name(schema.get("properties", {}).get("task")) is not None
    ]
    if len(found) != 1:
        raise CodegenError(
            f"requests take a 'task' param, but {len(found)} results carry only a task: {found}"
        )
    return found[0]


def _task_capability(
    defs: dict[str, JSONSchema], method: str, directions: tuple[Direction, ...]
) -> tuple[str, ...] | None:
    """The receiver's ``tasks.requests.<group>.<verb>`` capability for ``method``, if declared."""
    segments = method.split("/")
    if len(segments) != 2:
        return None
    for direction in directions:
        path: list[str] = []
        flags = _capability_flags(defs, RECEIVER_CAPABILITIES[direction])
        for name in ("tasks", "requests", *segments):
            if name not in flags:
                break
            path.append(name)
            node = flags[name]
            target = ref_name(node)
            flags = _capability_flags(defs, target) if target else node.get("properties", {})
        else:
            return tuple(path)
    return None


def _page_items(defs: dict[str, JSONSchema], params: str | None, result: str) -> str | None:
    """The list property of a paginated result: params take a ``cursor``, the result gives
    ``nextCursor`` and exactly one array property."""
    params_props: JSONSchema = defs.get(params, {}).get("properties", {}) if params else {}
    result_props = defs.get(result, {}).get("properties", {})
    if "cursor" not in params_props or "nextCursor" not in result_props:
        return None
    arrays = [name for name, node in result_props.items() if node.get("type") == "array"]
    return arrays[0] if len(arrays) == 1 else None


def _input_requests(defs: dict[str, JSONSchema]) -> set[str]:
    """Members of the ``InputRequest`` union that no other request union holds."""
    sent = {
        member
        for union, _ in REQUEST_UNIONS
        if union != INPUT_REQUEST_UNION
        for member in message_members(defs, union)
    }
    return set(message_members(defs, INPUT_REQUEST_UNION)) - sent


def build_methods(defs: dict[str, JSONSchema]) -> tuple[Method, ...]:
    methods: list[Method] = []
    embedded = _input_requests(defs)
    task_result: str | None = None
    for request, directions in _members_by_direction(defs, REQUEST_UNIONS).items():
        params, params_required = _params(defs, request)
        results, link = _results(defs, request)
        name = _method_name(defs, request)
        caps = tuple(
            (d, cap) for d in directions if (cap := _capability(defs, name, d)) is not None
        )
        augmentable = _takes_task(defs, params)
        if augmentable and task_result is None:
            task_result = _task_result(defs)
        methods.append(
            Method(
                name,
                tuple(sorted(directions)),
                request,
                params,
                params_required,
                results,
                link,
                caps,
                lifecycle=name in LIFECYCLE_METHODS,
                page_items=_page_items(defs, params, results[0]),
                input_request=request in embedded,
                task_result=task_result if augmentable else None,
                task_capability=(
                    _task_capability(defs, name, tuple(sorted(directions))) if augmentable else None
                ),
            )
        )
    return tuple(sorted(methods, key=lambda m: m.method))


def build_notifications(defs: dict[str, JSONSchema]) -> tuple[Notification, ...]:
    out: list[Notification] = []
    for notification, directions in _members_by_direction(defs, NOTIFICATION_UNIONS).items():
        params, params_required = _params(defs, notification)
        name = _method_name(defs, notification)
        out.append(
            Notification(
                name,
                tuple(sorted(directions)),
                notification,
                params,
                params_required,
                lifecycle=name in LIFECYCLE_METHODS,
            )
        )
    return tuple(sorted(out, key=lambda n: n.method))
