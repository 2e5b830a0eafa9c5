"""The floor for the stdio benchmark: a bare orjson read-parse-write loop, no MCP runtime.

It answers ``initialize`` with a fixed result (agreeing to the revision the client proposes),
``tools/list`` with one ``echo`` tool (the Python SDK's client lists the tools before its first
call), ``tools/call`` with the text it was given, every other request with ``{}``, and ignores
notifications: the least work any server must do per message, in Python. Not an MCP server; only
``bench/runtime_stdio.py`` and ``bench/stdio_client.py`` talk to it.
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

INITIALIZE = {
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "bare-loop", "version": "0"},
}
TOOLS = {
    "tools": [
        {
            "name": "echo",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        }
    ]
}


def answer(message: dict[str, Any]) -> dict[str, Any]:
    method = message["method"]
    if method == "initialize":
        result: dict[str, Any] = {
            **INITIALIZE,
            "protocolVersion": message["params"]["protocolVersion"],
        }
    elif method == "tools/list":
        result = TOOLS
    elif method == "tools/call":
        text = str(message["params"]["arguments"]["text"])
        result = {"content": [{"type": "text", "text": text}]}
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    read, write = sys.stdin.buffer.readline, sys.stdout.buffer
    while line := read():
        message = orjson.loads(line)
        if "id" in message:
            write.write(orjson.dumps(answer(message)) + b"\n")
            write.flush()


if __name__ == "__main__":
    main()
