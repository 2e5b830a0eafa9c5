"""A small notes server for the ``mcpbind`` command line: ``mcpbind run``, ``inspect``, ``call``,
``read`` and ``prompt`` use it in the docs and the tests.

    mcpbind run examples/notes_app.py              # stdio
    mcpbind run examples/notes_app.py --http       # http://127.0.0.1:8000/mcp
    mcpbind call examples/notes_app.py add_note title=groceries body='milk, eggs'

It has a tool with annotations and a structured result, one that fails (``isError``), a resource,
a resource template with completion, and a prompt.
"""

from __future__ import annotations

from mcpbind.runtime.app import App, ToolError
from pydantic import BaseModel

app = App("notes", version="1.0", instructions="Keep short notes; read them as note://TITLE.")

NOTES: dict[str, str] = {"welcome": "Notes live in memory until the server stops."}


class Saved(BaseModel):
    title: str
    count: int


@app.tool(annotations={"idempotentHint": True, "destructiveHint": False})
def add_note(title: str, body: str) -> Saved:
    """Save a note under a title."""
    NOTES[title] = body
    return Saved(title=title, count=len(NOTES))


@app.tool()
def delete_note(title: str) -> str:
    """Delete a note; an error result if there is none."""
    if title not in NOTES:
        raise ToolError(f"no note titled {title!r}")
    del NOTES[title]
    return f"deleted {title}"


@app.tool()
def repeat(text: str, times: int = 2) -> str:
    """The text, `times` times."""
    return " ".join([text] * times)


@app.resource("note://index", mime_type="text/plain")
def index() -> str:
    """The titles of every note."""
    return "\n".join(sorted(NOTES))


@app.resource("note://{title}", mime_type="text/plain")
def note(title: str) -> str:
    """One note, by title."""
    return NOTES[title]


@app.completion("note://{title}", "title")
def titles(value: str) -> list[str]:
    return sorted(t for t in NOTES if t.startswith(value))


@app.prompt()
def summarize(title: str) -> str:
    """Ask for a summary of one note."""
    return f"Summarize the note {title!r}: {NOTES.get(title, '(missing)')}"


if __name__ == "__main__":
    app.run_stdio()
