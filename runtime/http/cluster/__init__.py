"""``mcpbind.runtime.http.cluster``: the former import path of ``mcpbind.runtime.cluster``, kept working.

The names are the same objects as ``mcpbind.runtime.cluster``'s, looked up there on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpbind.runtime._exports import alias

if TYPE_CHECKING:
    from mcpbind.runtime.cluster import *  # noqa: F403

alias(globals(), "mcpbind.runtime.cluster")
