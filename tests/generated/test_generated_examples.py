"""The specification's own examples (2026-07-28) validate and round-trip with the generated classes.

Each file sits in a folder named after the definition it is an example of. They are vendored with
the schema (``schema/2026-07-28/examples/``) and read through the loader, which checks each one
against the pinned ``SHA256SUMS``.
"""

from __future__ import annotations

import json

import pytest
from generated_helpers import adapter_of, canonical, definitions, round_trip
from mcpbind.codegen.load import load_examples
from pydantic import ValidationError

REVISION = "2026-07-28"
EXAMPLES = load_examples(REVISION)
FILES = sorted(EXAMPLES)


def test_all_examples_are_found() -> None:
    """129 at the pinned spec commit; a different count means a moved folder or a new snapshot."""
    assert len(FILES) == 129


# Examples the protocol refuses, with the errors they get. This complete ReadResourceResult lacks
# the caching hints ReadResourceResult requires (caching.md: servers MUST include them); the
# published schema only let it pass as an InputRequiredResult, whose resultType it does not have.
REFUSED = {
    "ReadResourceResultResponse/read-resource-result-response": {
        ("result", "complete", "cacheScope"),
        ("result", "complete", "ttlMs"),
    },
}


def _id(path: str) -> str:
    return path.removesuffix(".json")


@pytest.mark.parametrize("path", FILES, ids=[_id(p) for p in FILES])
def test_example_round_trips(path: str) -> None:
    name = path.split("/", 1)[0]
    instance = json.loads(EXAMPLES[path])
    if _id(path) in REFUSED:
        with pytest.raises(ValidationError) as caught:
            adapter_of(REVISION, name).validate_python(instance)
        assert {e["loc"] for e in caught.value.errors()} == REFUSED[_id(path)]
        assert {e["type"] for e in caught.value.errors()} == {"missing"}
        return
    assert name in definitions(REVISION), f"{path}: no definition {name!r} in {REVISION}"
    assert canonical(round_trip(REVISION, name, instance)) == canonical(instance)
