"""The types of lifespans and dependencies reach the user's code: what a lifespan yields is
``lifespan_context`` of the ``App``, the ``Server``, ``Context[T]`` and ``RequestContext[P, T]``;
a ``Depends`` parameter has its annotated type, and the default form is checked against what
the dependency gives. Lines marked ``# error`` must be exactly those the checker flags."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_typing import (  # noqa: F401 (a fixture, used by name)
    mypy_errors,
    pyright_errors,
    user_python,
)

SNIPPET = """
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any

from mcpbind.runtime import RequestContext, Server
from mcpbind.runtime.app import App, Context, Depends


@dataclass
class State:
    url: str


class DB:
    def rows(self) -> list[int]:
        return []


@asynccontextmanager
async def lifespan(app: App[State]) -> AsyncIterator[State]:
    yield State("sqlite://")


app = App("typed", lifespan=lifespan)
state: State = app.lifespan_context
not_state: int = app.lifespan_context  # error


async def get_db(ctx: Context[State]) -> AsyncIterator[DB]:
    url: str = ctx.lifespan_context.url
    yield DB() if url else DB()


def get_name() -> str:
    return "name"


def audit() -> Iterator[bool]:
    yield True


@app.tool()
async def tool(
    x: int,
    db: Annotated[DB, Depends(get_db)],
    name: str = Depends(get_name),
    audited: bool = Depends(audit),
) -> int:
    rows: list[int] = db.rows()
    db.columns()  # error
    return x + len(rows) + len(name) + int(audited)


@app.tool()
def wrong(count: int = Depends(get_name)) -> int:  # error
    return count


async def uses(ctx: Context[State]) -> None:
    port: int = ctx.lifespan_context.url  # error


@asynccontextmanager
async def server_lifespan(server: Server[State]) -> AsyncIterator[State]:
    yield State("memory://")


low = Server("low", lifespan=server_lifespan)
low_state: State = low.lifespan_context


async def handler(params: Any, context: RequestContext[Any, State]) -> None:
    url: str = context.lifespan_context.url
    size: bytes = context.lifespan_context.url  # error
"""


@pytest.mark.parametrize("checker", [mypy_errors, pyright_errors], ids=["mypy", "pyright"])
def test_lifespan_and_dependency_types_reach_the_user(
    tmp_path: Path,
    user_python: Path,  # noqa: F811
    checker: object,
) -> None:
    (tmp_path / "snippet.py").write_text(SNIPPET)
    expected = {
        number for number, line in enumerate(SNIPPET.splitlines(), 1) if line.endswith("# error")
    }
    flagged, output = checker(user_python, tmp_path, "snippet.py")  # type: ignore[operator]
    assert flagged == expected, output
