"""Emit the template-driven modules: method table, stubs, dispatch tables, package inits, names;
and the support module, which is source of its own (``support.py`` here), copied verbatim."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2

from ..ir import Direction, RevisionIR
from ..ir.extensions import EXTENSIONS
from .names_module import NameView, RevisionNames, name_views
from .tables import (
    MethodView,
    NotificationView,
    capability_trees,
    method_views,
    notification_views,
    notifications_sent_by,
    sent_by,
)

# The package whose files these are (``__package__`` is optional to a checker).
_PACKAGE = __name__.rpartition(".")[0]
_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("mcpbind.codegen", "templates"),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=False,
    autoescape=False,
)


def _frozenset(views: list[NameView]) -> str:
    """``frozenset({A, B})`` of the views' constants; ``frozenset()`` for none (``{}`` is a dict)."""
    return f"frozenset({{{', '.join(v.const for v in views)}}})" if views else "frozenset()"


_ENV.filters["frozenset"] = _frozenset


@dataclass(frozen=True)
class SideView:
    stub: str
    protocol: str
    requests_table: str
    notifications_table: str
    doc: str
    requests: list[MethodView]
    notifications: list[NotificationView]
    base: str = ""


@dataclass(frozen=True)
class RevisionSummary:
    name: str
    era: str


def render(template: str, **context: Any) -> str:
    return _ENV.get_template(template).render(**context)


def _stub_sides(ir: RevisionIR) -> list[SideView]:
    """``ClientStub`` and ``ServerStub``; and ``InputRequestStub``, a ``ServerStub`` that also
    asks, for a revision whose server asks the client only inside results (its input requests
    are not on ``ServerStub``)."""
    methods, notifications = method_views(ir), notification_views(ir)
    c2s, s2c = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
    embedded = {m.method for m in ir.methods if m.input_request}
    sides = [
        SideView(
            "ClientStub",
            "",
            "",
            "",
            f"What a client of revision {ir.revision} sends: requests a server handles, and notifications.",
            sent_by(methods, c2s),
            notifications_sent_by(notifications, c2s),
        ),
        SideView(
            "ServerStub",
            "",
            "",
            "",
            f"What a server of revision {ir.revision} sends: requests a client handles, and notifications.",
            [v for v in sent_by(methods, s2c) if v.method not in embedded],
            notifications_sent_by(notifications, s2c),
        ),
    ]
    if embedded:
        sides.append(
            SideView(
                "InputRequestStub",
                "",
                "",
                "",
                f"A ServerStub of revision {ir.revision} that may also ask the client: never "
                "as requests, but embedded in an InputRequiredResult, which the client answers "
                "by retrying its request with the results (a runtime's sender turns each call "
                "into an input request).",
                [v for v in methods if v.method in embedded],
                [],
                base="ServerStub",
            )
        )
    return sides


def _handler_sides(ir: RevisionIR) -> list[SideView]:
    methods, notifications = method_views(ir), notification_views(ir)
    c2s, s2c = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
    return [
        SideView(
            "",
            "ServerHandlers",
            "CLIENT_TO_SERVER_REQUESTS",
            "CLIENT_TO_SERVER_NOTIFICATIONS",
            f"Handlers a server of revision {ir.revision} may implement: what a client sends it.",
            sent_by(methods, c2s),
            notifications_sent_by(notifications, c2s),
        ),
        SideView(
            "",
            "ClientHandlers",
            "SERVER_TO_CLIENT_REQUESTS",
            "SERVER_TO_CLIENT_NOTIFICATIONS",
            f"Handlers a client of revision {ir.revision} may implement: what a server sends it.",
            sent_by(methods, s2c),
            notifications_sent_by(notifications, s2c),
        ),
    ]


def render_revision_modules(ir: RevisionIR) -> dict[str, str]:
    """``methods.py``, ``client.py``, ``server.py`` and ``__init__.py`` of one revision package."""
    common = {"revision": ir.revision, "era": ir.era.value, "meta_keys": ir.meta_keys}
    return {
        "methods.py": render(
            "methods.py.jinja",
            methods=method_views(ir),
            notifications=notification_views(ir),
            capabilities=capability_trees(ir),
            **common,
        ),
        "client.py": render("client.py.jinja", sides=_stub_sides(ir), **common),
        "server.py": render("server.py.jinja", sides=_handler_sides(ir), **common),
        "__init__.py": render("revision_init.py.jinja", **common),
    }


def support_source() -> str:
    """The text of ``generated/support.py``: this package's ``support.py``, byte for byte."""
    return resources.files(_PACKAGE).joinpath("support.py").read_bytes().decode("utf-8")


def render_names(per_revision: list[RevisionNames]) -> str:
    """``names.py``: the names of every revision in ``per_revision``, and of the extensions."""
    sections = name_views(per_revision)
    exports = ["META_KEYS", "NOTIFICATIONS", "REQUESTS"]
    exports += [view.const for views in sections.values() for view in views]
    return render(
        "names.py.jinja",
        extensions=[f"the {e.label}, ``{e.identifier}``" for e in EXTENSIONS],
        exports=sorted(exports),
        **sections,
    )


def render_shared_modules(
    revisions: list[RevisionSummary], names: list[RevisionNames]
) -> dict[str, str]:
    """The package ``__init__.py`` (revision index) and ``names.py`` (method names, ``_meta``
    keys); ``support.py`` is not rendered but copied (:func:`support_source`)."""
    return {
        "__init__.py": render("package_init.py.jinja", revisions=revisions),
        "names.py": render_names(names),
    }
