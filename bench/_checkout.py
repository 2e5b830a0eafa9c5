"""The benches measure the checkout they sit in, not an installed copy of mcpbind.

Every bench script imports this first (its own folder is on ``sys.path``). Unless the caller
set ``PYTHONPATH`` (to measure another install or checkout, as ``--pythonpath`` options do),
the repository root goes first on the path and into ``PYTHONPATH`` for the servers and drivers
a bench starts, as ``tests/conftest.py`` does for the tests. Without it, ``python bench/x.py``
found the installed copy, however stale.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["ROOT"]

ROOT = Path(__file__).resolve().parents[1]

if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT))
    os.environ["PYTHONPATH"] = str(ROOT)
