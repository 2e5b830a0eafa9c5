"""An instrumented app for the telemetry tests: ``python telemetry_app.py SPANS_FILE`` serves it
over stdio and appends each finished span to SPANS_FILE as a JSON line (``record``).

A resource ``notes://one``, a prompt ``greeting``; tools: ``echo``; ``fail``, which reports a tool error; ``ask``,
which asks the client to sample (a request back to the client during a tool call).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcpbind.runtime.app import App, Context, ToolError
from mcpbind.runtime.telemetry import instrument
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


def record(span: ReadableSpan) -> dict[str, Any]:
    """What the tests compare of a span, as plain JSON data."""
    context = span.get_span_context()
    assert context is not None
    return {
        "name": span.name,
        "kind": span.kind.name,
        "trace_id": f"{context.trace_id:032x}",
        "span_id": f"{context.span_id:016x}",
        "parent_id": f"{span.parent.span_id:016x}" if span.parent is not None else None,
        "attributes": dict(span.attributes or {}),
        "status": span.status.status_code.name,
    }


class FileExporter(SpanExporter):
    """Appends each span to a file as it ends, so a test reads them while the server runs."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self.path.open("a") as out:
            for span in spans:
                out.write(json.dumps(record(span)) + "\n")
        return SpanExportResult.SUCCESS


def build(provider: TracerProvider) -> App:
    app = App("traced")

    @app.tool()
    async def echo(text: str) -> str:
        """Return the text."""
        return text

    @app.tool()
    async def fail() -> str:
        """Always a tool error."""
        raise ToolError("this tool always fails")

    @app.tool()
    async def ask(ctx: Context) -> str:
        """Ask the client's model."""
        answer = await ctx.sample("capital of France?")
        return f"the model said: {answer.content.text}"

    @app.resource("notes://one")
    def note() -> str:
        """A resource, so that reading an unknown one is an error of the server's."""
        return "one"

    @app.prompt()
    def greeting() -> str:
        """A prompt, for the prompt's span."""
        return "Say hello."

    instrument(app.server, tracer_provider=provider)
    return app


if __name__ == "__main__":
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileExporter(Path(sys.argv[1]))))
    build(provider).run_stdio()
