"""mypy sees through the app layer's decorators: a decorated function keeps its signature, so
calling it wrongly is reported; the context's methods are typed. Lines marked ``# error`` must
be exactly those mypy flags."""

from __future__ import annotations

from pathlib import Path

from test_typing import mypy_errors, user_python  # noqa: F401 (a fixture, used by name)

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


@app.tool
def bare(n: int) -> int:
    return n


@app.tool(tags={"admin"}, timeout=2.0, enabled=False)
async def tagged(n: int) -> str:
    return str(n)


@app.prompt
def bare_prompt(topic: str) -> str:
    return topic


@app.tool(ui={"resourceUri": "ui://typed/view", "visibility": ["app"]})
def app_only() -> str:
    return ""


@app.tool(ui={"resourceUri": "ui://typed/view", "visibility": ["robot"]})  # error
def wrong_visibility() -> str:
    return ""


app.disable(tags={"admin"}, components="tool")
app.enable(names="bare")


total: int = add(1, 2)
text: str = add(1, 2)  # error
add("1")  # error
user(user_id=3)
review(1)  # error
doubled: int = bare(2)
bare("2")  # error
named: int = bare_prompt("x")  # error
app.tool(1)  # error
"""


def test_decorated_functions_keep_their_types(tmp_path: Path, user_python: Path) -> None:  # noqa: F811
    """Checked against a user's install of the package, as a user's file would be."""
    (tmp_path / "snippet.py").write_text(SNIPPET)
    expected = {
        number for number, line in enumerate(SNIPPET.splitlines(), 1) if line.endswith("# error")
    }
    flagged, output = mypy_errors(user_python, tmp_path, "snippet.py")
    assert flagged == expected, output
