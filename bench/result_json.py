"""A result's JSON answer two ways, instructions per answer under callgrind (not a test):
``python bench/result_json.py [--count N] [--results NAME ...]``.

The runtime dumps a handler's model to JSON data with its core serializer (``to_python``,
``mode="json"``, ``by_alias``, ``exclude_unset``: ``core/bindings.dumper``) and orjson encodes
the response around it. The other way asks the same serializer for the JSON bytes
(``to_json`` with the same options) and embeds them whole (``orjson.Fragment``), with no dict in
between. Each way runs under ``valgrind --tool=callgrind`` with 0 and with ``--count`` answers;
the difference divided by the count is the cost of one answer. The bytes of both are compared
first, for each result.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _callgrind
import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)
import orjson

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ("echo", "ascii-4k", "text-4k", "content-32", "structured")
WAYS = ("to_python", "to_json")


def result(name: str) -> Any:
    """A 2025-11-25 ``CallToolResult`` as a handler would return it."""
    from mcpbind.generated.v2025_11_25 import types as t

    if name == "echo":
        return t.CallToolResult(content=[t.TextContent(type="text", text="hello")])
    if name == "ascii-4k":
        return t.CallToolResult(content=[t.TextContent(type="text", text="e" * 4096)])
    if name == "text-4k":
        return t.CallToolResult(content=[t.TextContent(type="text", text="é" * 4096)])
    if name == "content-32":
        items: list[Any] = [t.TextContent(type="text", text=f"item {i}") for i in range(32)]
        return t.CallToolResult(content=items)
    rows = [{"id": i, "score": i / 7, "tags": ["a", "b"], "note": None} for i in range(16)]
    return t.CallToolResult(
        content=[t.TextContent(type="text", text="rows")], structuredContent={"rows": rows}
    )


def answer_way(way: str, cls: Any) -> Callable[[int, Any], bytes]:
    """One response's bytes for request ``i``, the way named."""
    serializer = cls.__pydantic_serializer__
    dumps, fragment = orjson.dumps, orjson.Fragment
    if way == "to_python":
        data = functools.partial(
            serializer.to_python, mode="json", by_alias=True, exclude_unset=True
        )
        return lambda i, value: dumps({"jsonrpc": "2.0", "id": i, "result": data(value)})
    text = functools.partial(serializer.to_json, by_alias=True, exclude_unset=True)
    return lambda i, value: dumps({"jsonrpc": "2.0", "id": i, "result": fragment(text(value))})


def run(way: str, name: str, count: int) -> None:
    """The measured process: ``count`` answers of result ``name``, the way named."""
    value = result(name)
    answer = answer_way(way, type(value))
    answer(0, value)
    for i in range(count):
        answer(i, value)


def same_bytes() -> None:
    """Both ways write the same bytes for every result measured."""
    for name in RESULTS:
        value = result(name)
        one, other = (answer_way(way, type(value))(7, value) for way in WAYS)
        if one != other:
            raise SystemExit(f"{name}: the two ways differ:\n{one!r}\n{other!r}")


def instructions(way: str, name: str, count: int, out: Path) -> int:
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT)}
    return _callgrind.run([sys.executable, __file__, "--run", way, name, str(count)], out, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--results", nargs="+", choices=RESULTS, default=list(RESULTS))
    parser.add_argument("--run", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        way, name, count = args.run
        run(way, name, int(count))
        return
    same_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.results:
            costs = []
            for way in WAYS:
                base = instructions(way, name, 0, Path(tmp) / "base.out")
                total = instructions(way, name, args.count, Path(tmp) / "run.out")
                costs.append((total - base) / args.count)
            print(
                f"{name}: to_python + orjson {costs[0] / 1000:,.1f}k, "
                f"to_json + Fragment {costs[1] / 1000:,.1f}k per answer"
            )


if __name__ == "__main__":
    main()
