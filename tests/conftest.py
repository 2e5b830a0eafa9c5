"""Shared test set-up: where the official schemas are, the repository root, and which code runs.

The pinned schemas are vendored in ``schema/`` (see ``schema/README.md``) and the loader reads
them from there; the tests read nothing outside the repository, so ``$MCPBIND_SCHEMA_DIR`` (an
override for a user's own folder) is dropped here: only the tests of the override set it.

The tests run the checkout as edited, without a reinstall: its ``mcpbind/`` folder links the
root folders under their installed names, pytest puts the root first on ``sys.path``
(``pythonpath`` in pyproject.toml), and ``PYTHONPATH`` passes it on to the servers, examples and
``mcpbind`` commands the tests start. Where git checked those links out as plain files (Windows
without symlinks), the regular install runs instead, and it must match the checkout.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
LINKED = ("codegen", "generated", "runtime", "schema")

os.environ.pop("MCPBIND_SCHEMA_DIR", None)

# A shell without job control starts a background command (``pytest ... &``) with SIGINT
# ignored, and every process it starts inherits that: the tests that stop a server with SIGINT
# need it as a terminal gives it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def links_work(root: Path) -> bool:
    """Whether ``root/mcpbind/<folder>`` leads to ``root/<folder>`` for every linked folder."""
    return all((root / "mcpbind" / name).resolve() == (root / name).resolve() for name in LINKED)


LINKS_WORK = links_work(REPO_ROOT)
if LINKS_WORK:
    # pytest's ``pythonpath`` did this for this process; child processes learn it from here.
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    _inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT), *(p for p in _inherited if p != str(REPO_ROOT))]
    )

# Test helper modules (npmkit, runtime_helpers, httpkit, suitekit...) import by name from any test
# folder, whichever test pytest collects first.
for _helpers in ("", "runtime", "runtime/http", "conformance", "generated"):
    if str(REPO_ROOT / "tests" / _helpers) not in sys.path:
        sys.path.append(str(REPO_ROOT / "tests" / _helpers))


def pytest_configure(config: pytest.Config) -> None:
    """Run the checkout, or else an installed package that does not differ from it."""
    from mcpbind.codegen.checkout import installed_root, stale_files

    if installed_root() == REPO_ROOT:
        return
    stale = stale_files(REPO_ROOT)
    if stale:
        shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
        why = (
            "the links in mcpbind/ are not links (git core.symlinks is off; see CONTRIBUTING.md)"
            if not LINKS_WORK
            else f"mcpbind was imported from {installed_root()}, not from the checkout"
        )
        raise pytest.UsageError(
            f"the tests run the installed mcpbind, which differs from the checkout {REPO_ROOT} "
            f"in {shown}: {why}; reinstall after each edit: .venv/bin/pip install --no-deps ."
        )


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def schema_dir() -> Path:
    """The vendored schemas: ``<rev>/schema.json``, ``schema.ts``, ``changelog.md``."""
    return REPO_ROOT / "schema"
