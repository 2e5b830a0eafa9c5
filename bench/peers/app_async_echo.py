"""The README's app with its ``echo`` written ``async def``, alone, over stdio: the app layer's
cost without the worker thread a plain ``def`` tool runs in (for ``bench/runtime_stdio.py``)."""

from mcpbind.runtime.app import App

app = App("demo-async", version="1.0")


@app.tool()
async def echo(text: str) -> str:
    """Return the text it is given."""
    return text


if __name__ == "__main__":
    app.run_stdio()
