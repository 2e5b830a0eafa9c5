"""mypy sees through the app layer's decorators: a decorated function keeps its signature, so
calling it wrongly is reported; the context's methods are typed. Lines marked ``# error`` must
be exactly those mypy flags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_typing import run_mypy

SNIPPET = """
from pydantic import BaseModel

from mcpbind.runtime.app import App, Context

app = App("typed")


class Name(BaseModel):
    name: str


@app.tool()
def add(a: int, b: int = 0) -> int:
    return a + b


@app.tool(name="greet", annotations={"readOnlyHint": True})
async def greet(ctx: Context) -> str:
    await ctx.report_progress(1, 2, "half")
    await ctx.info("hello")
    reply = await ctx.elicit("Name?", Name)
    if reply.data is not None:
        name: str = reply.data.name
        wrong: int = reply.data.name  # error
        return name + str(wrong)
    await ctx.report_progress("half")  # error
    return reply.action


@app.resource("users://{user_id}")
def user(user_id: int) -> str:
    return str(user_id)


@app.prompt()
def review(code: str) -> str:
    return code


total: int = add(1, 2)
text: str = add(1, 2)  # error
add("1")  # error
user(user_id=3)
review(1)  # error
"""


@pytest.fixture(scope="module")
def mypy_tree(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Path:
    root = tmp_path_factory.mktemp("apptyping")
    (root / "mcpbind").mkdir()
    for name in ("codegen", "generated", "runtime", "schema"):
        (root / "mcpbind" / name).symlink_to(repo_root / name, target_is_directory=True)
    return root


def test_decorated_functions_keep_their_types(mypy_tree: Path) -> None:
    snippet = mypy_tree / "snippet.py"
    snippet.write_text(SNIPPET)
    expected = {
        number for number, line in enumerate(SNIPPET.splitlines(), 1) if line.endswith("# error")
    }
    done = run_mypy(mypy_tree, "snippet.py")
    flagged = {
        int(m.group(1))
        for m in re.finditer(r"^snippet\.py:(\d+): error", done.stdout, re.MULTILINE)
    }
    assert flagged == expected, done.stdout + done.stderr
