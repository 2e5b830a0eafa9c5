"""``mcpbind.runtime.http.auth.server``: the former import path of ``mcpbind.runtime.auth.server``, kept working.

The names are the same objects as ``mcpbind.runtime.auth.server``'s, looked up there on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpbind.runtime._exports import alias

if TYPE_CHECKING:
    from mcpbind.runtime.auth.server import *  # noqa: F403

alias(globals(), "mcpbind.runtime.auth.server")
