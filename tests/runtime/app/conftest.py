"""The app layer's tests import their helpers (``app_helpers``, ``app_server``) by name."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.append(HERE)
