"""FastMCP 4.x's echo server for ``bench/peer_table.py``, written as FastMCP's README shows.

Runs in the peers' own venv (FastMCP is not a dependency of mcpbind): ``python
fastmcp_echo.py`` serves stdio, ``python fastmcp_echo.py --http PORT`` Streamable HTTP on
127.0.0.1 (FastMCP's own ``run(transport="http")`` on uvicorn, which picks uvloop and httptools
as it does for mcpbind; the banner and the per-request access log are turned off, as the other
Python servers of the table run without them).
"""

import sys

from fastmcp import FastMCP

mcp = FastMCP("bench-fastmcp")


@mcp.tool
def echo(text: str) -> str:
    """Return the text it is given."""
    return text


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        mcp.run(
            transport="http",
            host="127.0.0.1",
            port=int(sys.argv[2]),
            show_banner=False,
            log_level="warning",
            uvicorn_config={"access_log": False},
        )
    else:
        mcp.run(show_banner=False)
