"""The template context for a revision's tables and stubs, computed from the IR alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import CodegenError
from ..ir import Direction, RevisionIR
from ..ir.capabilities import SIDES
from ..ir.fixups import INPUT_REQUIRED_RESULT
from ..ir.refs import ref_name
from ..jsonvalues import is_object
from .names import constant, snake, stem


@dataclass(frozen=True)
class MethodView:
    method: str
    const: str
    handler: str
    directions: tuple[str, ...]
    request_class: str
    params_class: str | None
    params_required: bool
    result_expr: str
    result_link: str
    capabilities: tuple[tuple[str, str], ...]
    lifecycle: bool
    page_items: str | None
    item_expr: str | None
    summary: str
    task_result_expr: str | None = None
    task_capability: tuple[str, ...] | None = None
    result_members: tuple[str, ...] | None = None


@dataclass(frozen=True)
class NotificationView:
    method: str
    const: str
    handler: str
    directions: tuple[str, ...]
    notification_class: str
    params_class: str | None
    params_required: bool
    lifecycle: bool
    summary: str


def _summary(description: object) -> str:
    if not isinstance(description, str) or not description.strip():
        return ""
    first = description.strip().split("\n\n")[0]
    return " ".join(first.split()).replace('"""', "'''").replace("\\", "\\\\")


def _enum_member(direction: Direction) -> str:
    return f"Direction.{direction.name}"


def _item_expr(ir: RevisionIR, result: str, page_items: str | None) -> str | None:
    """The class of one item of a paginated result (``types.Tool`` for ``tools/list``), so that
    the method table can say statically what ``list_all`` returns; ``Any`` for an inline item."""
    if page_items is None:
        return None
    prop = ir.definitions[result].schema.get("properties", {}).get(page_items, {})
    name = ref_name(prop.get("items") if is_object(prop) else None)
    if name is None or name not in ir.definitions:
        return "Any"
    return f"types.{ir.definitions[name].class_name}"


def _result_members(ir: RevisionIR, results: tuple[str, ...]) -> tuple[str, ...] | None:
    """The wire members of a method's complete result (not its ``InputRequiredResult``), in the
    order its class declares them (sorted: the models' own order), where its schema lists its
    properties flat; None for a result made of ``allOf`` parts."""
    complete = [r for r in results if r != INPUT_REQUIRED_RESULT]
    if not complete:
        return None
    schema = ir.definitions[complete[0]].schema
    properties = schema.get("properties")
    if "allOf" in schema or not is_object(properties):
        return None
    return tuple(sorted(properties))


def capability_trees(ir: RevisionIR) -> dict[str, str]:
    """Each side's capability tree as Python source, by its class name: a flag member is
    ``True``, any other member the tree of its own members (``{}`` when it lists none), so that
    a runtime can build capabilities without defining the classes."""
    trees: dict[str, dict[str, Any]] = {definition: {} for _, definition in SIDES}
    definitions = dict(SIDES)
    for flag in ir.capabilities:
        node = trees[definitions[flag.side]]
        for part in flag.path[:-1]:
            node = node[part]
        node[flag.path[-1]] = True if flag.kind == "boolean" else {}
    return {
        definition: repr(tree) for definition, tree in trees.items() if definition in ir.definitions
    }


def method_views(ir: RevisionIR) -> list[MethodView]:
    cls = {name: d.class_name for name, d in ir.definitions.items()}
    views: list[MethodView] = []
    for m in ir.methods:
        views.append(
            MethodView(
                method=m.method,
                const=constant(m.method),
                handler=snake(stem(m.request, "Request")),
                directions=tuple(_enum_member(d) for d in m.directions),
                request_class=cls[m.request],
                params_class=cls[m.params] if m.params else None,
                params_required=m.params_required,
                result_expr=" | ".join(f"types.{cls[r]}" for r in m.results),
                result_link=m.result_link.value,
                capabilities=tuple((_enum_member(d), c) for d, c in m.capabilities),
                lifecycle=m.lifecycle,
                page_items=m.page_items,
                item_expr=_item_expr(ir, m.results[0], m.page_items),
                summary=_summary(ir.definitions[m.request].schema.get("description")),
                task_result_expr=f"types.{cls[m.task_result]}" if m.task_result else None,
                task_capability=m.task_capability,
                result_members=_result_members(ir, m.results),
            )
        )
    _check_unique("request handler", [v.handler for v in views])
    return views


def notification_views(ir: RevisionIR) -> list[NotificationView]:
    cls = {name: d.class_name for name, d in ir.definitions.items()}
    views = [
        NotificationView(
            method=n.method,
            const=constant(n.method),
            handler=snake(stem(n.notification, "Notification")),
            directions=tuple(_enum_member(d) for d in n.directions),
            notification_class=cls[n.notification],
            params_class=cls[n.params] if n.params else None,
            params_required=n.params_required,
            lifecycle=n.lifecycle,
            summary=_summary(ir.definitions[n.notification].schema.get("description")),
        )
        for n in ir.notifications
    ]
    _check_unique("notification handler", [v.handler for v in views])
    return views


def _check_unique(what: str, names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise CodegenError(f"two methods map to the same {what} name {name!r}")
        seen.add(name)


def sent_by(views: list[MethodView], direction: Direction) -> list[MethodView]:
    member = _enum_member(direction)
    return [v for v in views if member in v.directions]


def notifications_sent_by(
    views: list[NotificationView], direction: Direction
) -> list[NotificationView]:
    member = _enum_member(direction)
    return [v for v in views if member in v.directions]
