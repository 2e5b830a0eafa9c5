"""Property test: over every definition of every revision, what the models write is what the schema
allows, and what the schema allows round-trips.

Instances are drawn by hypothesis-jsonschema from the definition's own (normalised) JSON Schema,
validated with the generated class and dumped back (``mode="json", by_alias=True,
exclude_unset=True``, as the runtime sends). Asserted for each:

* the dump validates against the definition in ``schema.json`` itself, with ``jsonschema`` and the
  draft the file declares (draft-07 up to 2025-06-18, 2020-12 from 2025-11-25);
* the dump is the instance, key order aside: numbers keep their type (``50`` is not ``50.0``),
  strings are not coerced (URLs gaining a ``/``, base64 decoded), unknown fields and ``_meta``
  survive, and nothing the schema allows is refused;
* with ``None`` given to every optional field of the model (``description=None``), the dump still
  validates: ``None`` is never written where the schema refuses ``null``.

Bounded and deterministic for CI: a few examples per definition, derandomised, no database.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from generated_helpers import (
    REVISIONS,
    adapter_of,
    canonical,
    definitions,
    hypothesis_jsonschema_shims,
    round_trip,
    schema_document,
    schema_errors,
    strategy_for,
)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

CASES = [(revision, name) for revision in REVISIONS for name in definitions(revision)]
DUMP: dict[str, Any] = {"mode": "json", "by_alias": True, "exclude_unset": True}
# Examples per definition: enough to meet each definition's optional and unknown properties,
# few enough that the ~750 definitions stay well within a minute.
EXAMPLES = 3


@pytest.fixture(scope="module", autouse=True)
def _shims() -> Iterator[None]:
    with hypothesis_jsonschema_shims():
        yield


def test_every_definition_is_covered() -> None:
    """A guard against an empty or truncated parametrisation (e.g. a revision that lost its IR)."""
    assert len(CASES) > 700
    assert {revision for revision, _ in CASES} == set(REVISIONS)


def test_drafts_are_the_declared_ones() -> None:
    """The dumps are checked with the draft each file declares; 2025-11-25 moved to 2020-12."""
    drafts = {revision: schema_document(revision)["$schema"] for revision in REVISIONS}
    assert drafts["2024-11-05"] == "http://json-schema.org/draft-07/schema#"
    assert drafts["2025-06-18"] == "http://json-schema.org/draft-07/schema#"
    assert drafts["2025-11-25"] == "https://json-schema.org/draft/2020-12/schema"
    assert drafts["2026-07-28"] == "https://json-schema.org/draft/2020-12/schema"


def _schema_required(schema: dict[str, Any]) -> set[str]:
    names = set(schema.get("required", []))
    for member in schema.get("allOf", []):
        names |= _schema_required(member) if isinstance(member, dict) else set()
    return names


def _with_every_optional_none(revision: str, name: str, value: Any) -> Any:
    """``value`` with ``None`` given explicitly to each field the schema lets be absent.

    (Not to a ``_meta`` the schema requires: the models let it be absent, as the runtime writes it.)
    """
    if not isinstance(value, BaseModel):
        return None
    required = _schema_required(definitions(revision)[name].schema)
    optional = [
        field
        for field, info in type(value).model_fields.items()
        if not info.is_required() and (info.alias or field) not in required
    ]
    if not optional:
        return None
    return value.model_copy(update=dict.fromkeys(optional))


@pytest.mark.parametrize(("revision", "name"), CASES, ids=[f"{r}-{n}" for r, n in CASES])
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # the same examples on every run: CI must not flake
    database=None,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
    # Big unions draw large instances and reject some; that is expected, not a health problem.
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
@given(data=st.data())
def test_what_the_models_write_is_what_the_schema_allows(
    revision: str, name: str, data: st.DataObject
) -> None:
    instance = data.draw(strategy_for(revision, name), label=name)
    assert schema_errors(revision, name, instance) == []  # the generator drew a valid instance
    dumped = round_trip(revision, name, instance)
    assert schema_errors(revision, name, dumped) == []
    assert canonical(dumped) == canonical(instance)

    adapter = adapter_of(revision, name)
    nones = _with_every_optional_none(revision, name, adapter.validate_python(instance))
    if nones is not None:
        assert schema_errors(revision, name, adapter.dump_python(nones, **DUMP)) == []
