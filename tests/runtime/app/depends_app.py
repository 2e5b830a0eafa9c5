"""An app whose tools, resources and prompts take dependencies (``Depends``), each recording
what it did in ``EVENTS``; the ``events`` tool hands the record over (and clears it), so the
tests read it the same way in process and from a stdio subprocess (``python depends_app.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Annotated

import anyio
from mcpbind.runtime.app import App, Context, Depends, ToolError

EVENTS: list[str] = []


class DB:
    def __init__(self, name: str) -> None:
        self.name = name


async def get_db(ctx: Context) -> AsyncIterator[DB]:
    """An async generator taking the context: one connection per request, closed after."""
    db = DB(f"db{ctx.request_id}")
    EVENTS.append(f"open {db.name}")
    try:
        yield db
    except BaseException as exc:
        EVENTS.append(f"rollback {db.name} {type(exc).__name__}")
        raise
    finally:
        EVENTS.append(f"close {db.name}")


def settings() -> dict[str, str]:
    """A plain function (run in a worker thread)."""
    EVENTS.append("settings")
    return {"greeting": "hello"}


async def current_user(
    db: Annotated[DB, Depends(get_db)], config: Annotated[dict[str, str], Depends(settings)]
) -> str:
    """An async function depending on two others."""
    return f"{config['greeting']} from {db.name}"


def audit() -> Iterator[str]:
    """A sync generator: its cleanup runs after the call, in a worker thread."""
    EVENTS.append("audit start")
    yield "audited"
    EVENTS.append("audit end")


COUNTER = iter(range(1, 1_000_000))


def ticket() -> int:
    return next(COUNTER)


def unreachable() -> DB:
    raise ConnectionError("database unreachable")


def refusing() -> DB:
    raise ToolError("not allowed today")


app = App("depends")


@app.tool()
async def query(
    sql: str,
    db: Annotated[DB, Depends(get_db)],
    who: Annotated[str, Depends(current_user)],
    trail: str = Depends(audit),
) -> str:
    """get_db is wanted twice (here and by current_user): opened once per request."""
    EVENTS.append(f"query {sql}")
    return f"{sql} on {db.name} by {who} ({trail})"


@app.tool()
def tickets(
    first: Annotated[int, Depends(ticket, use_cache=False)],
    second: Annotated[int, Depends(ticket, use_cache=False)],
    same: Annotated[int, Depends(ticket)],
    again: Annotated[int, Depends(ticket)],
) -> list[int]:
    """A sync tool; ``use_cache=False`` calls the dependency each time it is wanted."""
    return [second - first, again - same]


@app.tool()
async def failing(db: Annotated[DB, Depends(get_db)]) -> str:
    raise ValueError("query failed")


@app.tool()
async def slow(db: Annotated[DB, Depends(get_db)]) -> str:
    EVENTS.append("slow started")
    await anyio.sleep(60)
    return "never"


@app.tool()
def broken(db: Annotated[DB, Depends(unreachable)]) -> str:
    return db.name


@app.tool()
def refused(db: Annotated[DB, Depends(refusing)]) -> str:
    return db.name


@app.resource("rows://{table}")
async def rows(table: str, db: Annotated[DB, Depends(get_db)]) -> str:
    return f"{table} via {db.name}"


@app.resource("config://broken")
def broken_resource(db: Annotated[DB, Depends(unreachable)]) -> str:
    return db.name


@app.prompt()
def ask(topic: str, who: Annotated[str, Depends(current_user)]) -> str:
    return f"{who}: tell me about {topic}"


@app.prompt()
def broken_prompt(db: Annotated[DB, Depends(unreachable)]) -> str:
    return db.name


@app.tool()
def events() -> list[str]:
    """What happened since the last call."""
    seen = list(EVENTS)
    EVENTS.clear()
    return seen


if __name__ == "__main__":
    app.run_stdio()
