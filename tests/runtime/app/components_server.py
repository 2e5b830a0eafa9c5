"""An app with tags, disabled components and time limits, used by
``test_app_components.py`` in process and as a stdio subprocess."""

from __future__ import annotations

import sys
import threading
import time

import anyio
from mcpbind.runtime.app import App

#: Set by the sync tool's thread once it ran to its end (after its call had timed out).
FINISHED = threading.Event()

app = App("components", tool_timeout=5.0)


@app.tool
def status() -> str:
    """Bare decorator: the function's name and docstring."""
    return "ok"


@app.tool(tags={"admin"})
def reset() -> str:
    return "reset"


@app.tool(tags={"admin", "danger"}, enabled=False)
def wipe() -> str:
    return "wiped"


@app.tool(timeout=0.2)
async def sleepy(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "slept"


@app.tool(timeout=0.2)
def blocking(seconds: float) -> str:
    time.sleep(seconds)
    FINISHED.set()
    return "blocked"


@app.tool
async def lock(tag: str) -> str:
    """Disable every component tagged ``tag`` (from inside a request)."""
    app.disable(tags=tag)
    return f"disabled {tag}"


@app.tool
async def unlock(tag: str) -> str:
    app.enable(tags=tag)
    return f"enabled {tag}"


@app.prompt
def hello() -> str:
    return "Hello"


@app.prompt(tags={"admin"})
def audit(area: str) -> str:
    return f"Audit {area}"


@app.resource("config://public")
def public() -> str:
    return "public"


@app.resource("config://secret", tags={"admin"})
def secret() -> str:
    return "secret"


@app.resource("logs://{day}", tags={"admin"})
def logs(day: str) -> str:
    return f"logs of {day}"


@app.resource("pages://docs/{+path}{?v}")
def page(path: str, v: int = 1) -> str:
    return f"{path} v{v}"


if __name__ == "__main__":
    if "--lock-admin" in sys.argv:
        app.disable(tags="admin")
    app.run_stdio()
