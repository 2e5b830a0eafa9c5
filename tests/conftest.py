"""Shared test set-up: where the official schemas are, and the repository root.

The pinned schemas are vendored in ``schema/`` (see ``schema/README.md``) and the loader reads
them from there; the tests read nothing outside the repository, so ``$MCPBIND_SCHEMA_DIR`` (an
override for a user's own folder) is dropped here: only the tests of the override set it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

os.environ.pop("MCPBIND_SCHEMA_DIR", None)

# Test helper modules (npmkit, runtime_helpers, httpkit, suitekit...) import by name from any test
# folder, whichever test pytest collects first.
for _helpers in ("", "runtime", "runtime/http", "conformance"):
    if str(REPO_ROOT / "tests" / _helpers) not in sys.path:
        sys.path.append(str(REPO_ROOT / "tests" / _helpers))


def pytest_configure(config: pytest.Config) -> None:
    """The tests run the installed package: refuse one that differs from this checkout."""
    from mcpbind.codegen.checkout import stale_files

    stale = stale_files(REPO_ROOT)
    if stale:
        shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
        raise pytest.UsageError(
            f"the installed mcpbind differs from the checkout {REPO_ROOT} in {shown}; "
            "install it again: .venv/bin/pip install '.[test]'"
        )


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def schema_dir() -> Path:
    """The vendored schemas: ``<rev>/schema.json``, ``schema.ts``, ``changelog.md``."""
    return REPO_ROOT / "schema"
