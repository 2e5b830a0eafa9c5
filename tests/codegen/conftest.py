"""IRs of the pinned revisions, built once per test session."""

from __future__ import annotations

import pytest
from mcpbind.codegen.ir import RevisionIR, build_ir
from mcpbind.codegen.load import load_revision
from mcpbind.codegen.pins import load_pins


@pytest.fixture(scope="session")
def irs() -> dict[str, RevisionIR]:
    return {rev: build_ir(load_revision(rev)) for rev in load_pins()}
