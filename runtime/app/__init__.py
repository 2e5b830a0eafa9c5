"""The app layer: an MCP server from plain typed functions, on the runtime's ``Server``.

::

    from mcpbind.runtime.app import App, Context

    app = App("demo")

    @app.tool()
    def add(a: int, b: int = 0) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b

    if __name__ == "__main__":
        app.run_stdio()

Schemas come from signatures and return annotations, results are shaped for the revision each
client negotiated (2024-11-05 .. 2026-07-28), and a ``Context`` parameter gives progress,
logging, elicitation, sampling and roots in both protocol eras.

The app layer, on top of the runtime. May import: every layer below it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpbind.runtime._exports import install

if TYPE_CHECKING:
    from ._app import App as App
    from ._asking import ElicitationResult as ElicitationResult
    from ._context import Context as Context
    from ._depends import Depends as Depends
    from ._tools import ToolError as ToolError
    from ._ui_meta import UiTool as UiTool

install(globals())
