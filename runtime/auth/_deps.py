"""Lazy access to authlib, the optional ``auth`` extra, with an error that names the extra."""

from __future__ import annotations

import importlib
from types import ModuleType

from ._errors import MissingDependencyError

INSTALL_HINT = "OAuth support needs the 'auth' extra: pip install 'mcpbind[auth]'"


def load(module: str) -> ModuleType:
    """Import ``module`` (an authlib or joserfc module), or explain how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(f"{INSTALL_HINT} ({exc})") from exc
