"""The specification's own examples (2026-07-28) validate and round-trip with the generated classes.

Each file sits in a folder named after the definition it is an example of.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from generated_helpers import adapter_of, canonical, definitions, round_trip
from pydantic import ValidationError

REVISION = "2026-07-28"
EXAMPLES = Path(os.environ["MCPBIND_SCHEMA_DIR"]) / REVISION / "examples"
FILES = sorted(EXAMPLES.glob("*/*.json"))


def test_all_examples_are_found() -> None:
    """129 at the pinned spec commit; a different count means a moved folder or a new snapshot."""
    assert len(FILES) == 129, EXAMPLES


# Examples the protocol refuses, with the errors they get. This complete ReadResourceResult lacks
# the caching hints ReadResourceResult requires (caching.md: servers MUST include them); the
# published schema only let it pass as an InputRequiredResult, whose resultType it does not have.
REFUSED = {
    "ReadResourceResultResponse/read-resource-result-response": {
        ("result", "complete", "cacheScope"),
        ("result", "complete", "ttlMs"),
    },
}


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


@pytest.mark.parametrize("path", FILES, ids=[_id(p) for p in FILES])
def test_example_round_trips(path: Path) -> None:
    name = path.parent.name
    if _id(path) in REFUSED:
        instance = json.loads(path.read_text(encoding="utf-8"))
        with pytest.raises(ValidationError) as caught:
            adapter_of(REVISION, name).validate_python(instance)
        assert {e["loc"] for e in caught.value.errors()} == REFUSED[_id(path)]
        assert {e["type"] for e in caught.value.errors()} == {"missing"}
        return
    assert name in definitions(REVISION), f"{path}: no definition {name!r} in {REVISION}"
    instance = json.loads(path.read_text(encoding="utf-8"))
    assert canonical(round_trip(REVISION, name, instance)) == canonical(instance)
