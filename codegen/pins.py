"""Read the revision pins in ``schema/pins.toml``.

A pin ties a revision name to the exact bytes we generate from (spec commit, URL, sha256), because
released schema files were edited after their release date.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources

from .errors import CodegenError


@dataclass(frozen=True)
class Pin:
    """Where one revision's ``schema.json`` comes from, and the sha256 its bytes must have."""

    revision: str
    spec_commit: str
    path: str
    sha256: str
    url: str
    last_change: str


def load_pins() -> dict[str, Pin]:
    """All pinned revisions, oldest first."""
    text = resources.files("mcpbind.schema").joinpath("pins.toml").read_text(encoding="utf-8")
    table = tomllib.loads(text)["revisions"]
    return {
        rev: Pin(
            revision=rev,
            spec_commit=entry["spec_commit"],
            path=entry["path"],
            sha256=entry["sha256"],
            url=entry["url"],
            last_change=entry["last_change"],
        )
        for rev, entry in sorted(table.items())
    }


def get_pin(revision: str) -> Pin:
    """The pin of ``revision``, or a CodegenError listing the known ones."""
    pins = load_pins()
    try:
        return pins[revision]
    except KeyError:
        known = ", ".join(pins)
        raise CodegenError(f"unknown revision {revision!r}; pinned revisions: {known}") from None
