"""The specification's own examples (2026-07-28) validate and round-trip with the generated classes.

Each file sits in a folder named after the definition it is an example of.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from generated_helpers import canonical, definitions, round_trip

REVISION = "2026-07-28"
EXAMPLES = Path(os.environ["MCPBIND_SCHEMA_DIR"]) / REVISION / "examples"
FILES = sorted(EXAMPLES.glob("*/*.json"))


def test_all_examples_are_found() -> None:
    """129 at the pinned spec commit; a different count means a moved folder or a new snapshot."""
    assert len(FILES) == 129, EXAMPLES


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_example_round_trips(path: Path) -> None:
    name = path.parent.name
    assert name in definitions(REVISION), f"{path}: no definition {name!r} in {REVISION}"
    instance = json.loads(path.read_text(encoding="utf-8"))
    assert canonical(round_trip(REVISION, name, instance)) == canonical(instance)
