"""The example server answers bad arguments as the caller's mistake, never as an internal error."""

from __future__ import annotations

from typing import Any

import pytest
from stdio_raw import RawServer, call, raw_example

pytestmark = pytest.mark.anyio


def read(request_id: int, uri: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "resources/read", "params": {"uri": uri}}


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-11-25"])
async def test_bad_tool_arguments_are_tool_errors(revision: str) -> None:
    bad = [
        call(1, "add", a="1", b=2),
        call(2, "add", a=1),
        call(3, "add", a=None, b=2),
        call(4, "add", a=True, b=2),
        call(5, "echo"),
        call(6, "echo", text=["x"]),
        call(7, "slow", steps="many"),
        call(8, "slow", steps=10**9),
        call(9, "slow", delay=-1),
    ]
    async with await raw_example() as process:
        server = RawServer(process)
        await server.initialize(revision)
        for request in bad:
            reply = await server.call(request)
            assert reply["id"] == request["id"]
            assert reply["result"]["isError"] is True, reply
            assert "must be" in reply["result"]["content"][0]["text"]
        reply = await server.call(call(10, "add", a=1, b=2.5))
        assert reply["result"]["content"][0]["text"] == "3.5"
        reply = await server.call(call(11, "echo", text="ok"))
        assert reply["result"]["content"][0]["text"] == "ok"


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-11-25"])
async def test_a_bad_square_uri_is_invalid_params(revision: str) -> None:
    async with await raw_example() as process:
        server = RawServer(process)
        await server.initialize(revision)
        for i, uri in enumerate(
            ["square://99999999999999999999", "square://²", "square://", "square://1.5"]
        ):
            reply = await server.call(read(i, uri))
            assert reply["error"]["code"] == -32602, reply
            assert reply["error"]["data"] == {"uri": uri}
        assert (await server.call(read(10, "square://-12")))["result"]["contents"][0][
            "text"
        ] == "144"
        assert (await server.call(read(11, "memo://nothing")))["error"]["code"] == -32002
