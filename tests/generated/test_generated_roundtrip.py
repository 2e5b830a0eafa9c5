"""Property test: every definition of every revision round-trips through its generated class.

Instances are drawn by hypothesis-jsonschema from the definition's own (normalised) JSON Schema,
validated with the generated class and dumped back; the JSON must be the same, key order aside. That
catches numbers re-typed (``50`` -> ``50.0``), strings coerced (URLs gaining a ``/``, base64
decoded), unknown fields or ``_meta`` dropped, and values the models reject although the schema
allows them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from generated_helpers import (
    REVISIONS,
    canonical,
    definitions,
    hypothesis_jsonschema_shims,
    round_trip,
    strategy_for,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CASES = [(revision, name) for revision in REVISIONS for name in definitions(revision)]


@pytest.fixture(scope="module", autouse=True)
def _shims() -> Iterator[None]:
    with hypothesis_jsonschema_shims():
        yield


def test_every_definition_is_covered() -> None:
    """A guard against an empty or truncated parametrisation (e.g. a revision that lost its IR)."""
    assert len(CASES) > 700
    assert {revision for revision, _ in CASES} == set(REVISIONS)


@pytest.mark.parametrize(("revision", "name"), CASES, ids=[f"{r}-{n}" for r, n in CASES])
@settings(
    max_examples=15,
    deadline=None,
    derandomize=True,  # the same examples on every run: CI must not flake
    database=None,
    # Big unions draw large instances and reject some; that is expected, not a health problem.
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
@given(data=st.data())
def test_round_trip(revision: str, name: str, data: st.DataObject) -> None:
    instance = data.draw(strategy_for(revision, name), label=name)
    assert canonical(round_trip(revision, name, instance)) == canonical(instance)
