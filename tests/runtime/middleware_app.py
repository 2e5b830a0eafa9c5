"""An app whose middleware the middleware tests watch, in-process or over stdio
(``python middleware_app.py`` serves it on stdin/stdout).

Two recording middleware (``outer`` added first, ``inner`` second) write to ``JOURNAL``; the
``gate`` middleware, innermost, answers some tool calls itself: ``cached`` with a result,
``blocked`` with an ``McpError``, ``broken`` by raising. The ``journal`` tool returns the
journal, so a client in another process can read it.
"""

from __future__ import annotations

from typing import Any

from mcpbind.runtime import CallNext, IncomingCall, McpError
from mcpbind.runtime.app import App

BLOCKED = -31000
JOURNAL: list[str] = []


def label(call: IncomingCall) -> str:
    name = (call.params or {}).get("name")
    return f"{call.method}:{name}" if name else call.method


async def outer(call: IncomingCall, call_next: CallNext) -> Any:
    JOURNAL.append(f"outer> {label(call)} {call.kind} {call.era} {call.revision}")
    try:
        return await call_next()
    finally:
        JOURNAL.append(f"<outer {label(call)}")


async def inner(call: IncomingCall, call_next: CallNext) -> Any:
    JOURNAL.append(f"inner> {label(call)}")
    result = await call_next()
    JOURNAL.append(f"<inner {label(call)}")
    return result


async def gate(call: IncomingCall, call_next: CallNext) -> Any:
    name = (call.params or {}).get("name") if call.method == "tools/call" else None
    if name == "cached":
        return {"content": [{"type": "text", "text": "answered by middleware"}]}
    if name == "blocked":
        raise McpError(BLOCKED, "blocked by policy: tool 'blocked'")
    if name == "broken":
        raise RuntimeError("secret detail that must not reach the client")
    return await call_next()


def build() -> App:
    app = App("middleware-test", middleware=[outer, inner])
    app.middleware(gate)

    @app.tool()
    async def echo(text: str) -> str:
        """Return the text."""
        JOURNAL.append(f"handler echo {text}")
        return text

    @app.tool()
    async def journal() -> str:
        """What the middleware saw so far, one entry a line."""
        return "\n".join(JOURNAL)

    @app.tool()
    async def cached() -> str:
        """Never runs: the gate answers."""
        raise AssertionError("the gate should have answered")

    @app.tool()
    async def blocked() -> str:
        """Never runs: the gate refuses."""
        raise AssertionError("the gate should have refused")

    @app.tool()
    async def broken() -> str:
        """Never runs: the gate fails."""
        raise AssertionError("the gate should have failed")

    return app


if __name__ == "__main__":
    build().run_stdio()
