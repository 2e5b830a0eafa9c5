"""zeromcp's echo server for ``bench/peer_table.py``, written as zeromcp's README shows.

Runs in the peers' own venv (zeromcp is not a dependency of mcpbind): ``python
zeromcp_echo.py`` serves stdio (``mcp.stdio()``), ``python zeromcp_echo.py --http PORT``
Streamable HTTP on 127.0.0.1 (``mcp.serve``: the standard library's threading HTTP server).
"""

import sys
import threading

from zeromcp import McpServer

mcp = McpServer("bench-zeromcp")


@mcp.tool
def echo(text: str) -> str:
    """Return the text it is given."""
    return text


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        # serve() answers from a background thread (one per connection) and returns; its
        # start-up lines go to stdout, which the benchmark does not read.
        mcp.serve("127.0.0.1", int(sys.argv[2]))
        threading.Event().wait()
    else:
        mcp.stdio()
