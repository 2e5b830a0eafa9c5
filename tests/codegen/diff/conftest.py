"""The ``diff_of`` fixture: diff two variants of the tiny schema in ``diff_schema``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from diff_schema import Mutation, base, build
from mcpbind.codegen.diff import Change, diff_revisions


@pytest.fixture
def diff_of(tmp_path: Path) -> Callable[..., list[Change]]:
    """``diff_of(old_mutation, new_mutation, include_descriptions=False)`` on copies of BASE."""

    def run(
        old: Mutation | None = None, new: Mutation | None = None, include_descriptions: bool = False
    ) -> list[Change]:
        old_defs, new_defs = base(), base()
        if old is not None:
            old(old_defs)
        if new is not None:
            new(new_defs)
        return diff_revisions(
            build(tmp_path, "old", old_defs),
            build(tmp_path, "new", new_defs),
            include_descriptions=include_descriptions,
        )

    return run
