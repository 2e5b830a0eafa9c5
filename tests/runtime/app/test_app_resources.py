"""Resources and templates, prompts and completion of the app layer, on the wire."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from app_helpers import HANDSHAKE, STATELESS, wire
from mcpbind.runtime import McpError
from mcpbind.runtime.app import App, Context
from pydantic import BaseModel

pytestmark = pytest.mark.anyio


class Profile(BaseModel):
    id: int
    name: str


def resources_app() -> App:
    app = App("resources")

    @app.resource("text://plain")
    def plain() -> str:
        return "some text"

    @app.resource("bin://blob", mime_type="image/png")
    def blob() -> bytes:
        return b"\x89PNG"

    @app.resource("json://model")
    def model() -> Profile:
        return Profile(id=1, name="Ada")

    @app.resource("users://{user_id}/posts/{slug}", description="One post.")
    async def post(user_id: int, slug: str, ctx: Context) -> dict[str, Any]:
        return {"user": user_id, "slug": slug, "revision": ctx.revision}

    @app.resource("fail://boom")
    def boom() -> str:
        raise OSError("disk on fire")

    @app.resource("fail://chosen")
    def chosen() -> str:
        raise McpError(-32042, "chosen")

    return app


async def test_static_resources_and_their_contents() -> None:
    async with wire(resources_app(), "2025-11-25") as peer:
        listed = await peer.result("resources/list")
        templates = await peer.result("resources/templates/list")
        plain = await peer.result("resources/read", {"uri": "text://plain"})
        blob = await peer.result("resources/read", {"uri": "bin://blob"})
        model = await peer.result("resources/read", {"uri": "json://model"})
    assert [r["uri"] for r in listed["resources"]] == [
        "text://plain",
        "bin://blob",
        "json://model",
        "fail://boom",
        "fail://chosen",
    ]
    assert listed["resources"][1] == {"uri": "bin://blob", "name": "blob", "mimeType": "image/png"}
    assert listed["resources"][0]["mimeType"] == "text/plain"  # from the return annotation
    assert templates["resourceTemplates"] == [
        {
            "uriTemplate": "users://{user_id}/posts/{slug}",
            "name": "post",
            "description": "One post.",
            "mimeType": "application/json",
        }
    ]
    assert plain["contents"] == [
        {"uri": "text://plain", "text": "some text", "mimeType": "text/plain"}
    ]
    assert blob["contents"] == [
        {
            "uri": "bin://blob",
            "blob": base64.b64encode(b"\x89PNG").decode(),
            "mimeType": "image/png",
        }
    ]
    assert model["contents"][0]["mimeType"] == "application/json"
    assert model["contents"][0]["text"] == '{\n  "id": 1,\n  "name": "Ada"\n}'


async def test_templates_match_level_one_and_convert_variables() -> None:
    async with wire(resources_app(), "2025-11-25") as peer:
        found = await peer.result("resources/read", {"uri": "users://42/posts/hello%20world"})
        wrong_type = await peer.request("resources/read", {"uri": "users://abc/posts/x"})
        too_deep = await peer.request("resources/read", {"uri": "users://1/posts/a/b"})
    assert found["contents"][0]["uri"] == "users://42/posts/hello%20world"
    assert found["contents"][0]["text"] == (
        '{\n  "user": 42,\n  "slug": "hello world",\n  "revision": "2025-11-25"\n}'
    )
    assert wrong_type["error"]["code"] == -32602
    assert "argument 'user_id'" in wrong_type["error"]["message"]
    assert too_deep["error"] == {
        "code": -32002,
        "message": "Resource not found",
        "data": {"uri": "users://1/posts/a/b"},
    }


@pytest.mark.parametrize("revision", [*HANDSHAKE, STATELESS])
async def test_unknown_resources_and_failures(revision: str) -> None:
    async with wire(resources_app(), revision) as peer:
        missing = await peer.request("resources/read", {"uri": "nothing://here"})
        boom = await peer.request("resources/read", {"uri": "fail://boom"})
        chosen = await peer.request("resources/read", {"uri": "fail://chosen"})
    # -32002 in the handshake era; the 2026-07-28 resources page says -32602.
    assert missing["error"]["code"] == (-32602 if revision == STATELESS else -32002)
    assert missing["error"]["message"] == "Resource not found"
    assert boom["error"]["code"] == -32603
    assert "OSError: disk on fire" in boom["error"]["message"]
    assert chosen["error"]["code"] == -32042


async def test_template_variables_must_be_the_parameters() -> None:
    app = App("bad")
    with pytest.raises(TypeError, match="must be the template's variables"):

        @app.resource("a://{x}")
        def wrong(y: str) -> str:
            return y

    with pytest.raises(TypeError, match="must be the template's variables"):

        @app.resource("a://{+x}")  # any RFC 6570 level now (test_app_uri_templates.py)
        def reserved() -> str:
            return ""


async def test_subscribe_and_updates() -> None:
    from mcpbind.runtime import Client

    app = resources_app()
    updates: list[str] = []
    client = Client(app.memory_transport(), protocol_version="2025-11-25")
    from mcpbind.generated.v2025_11_25 import methods, types

    @client.notification_handler(methods.NOTIFICATIONS_RESOURCES_UPDATED)
    async def updated(params: types.ResourceUpdatedNotificationParams, session: Any) -> None:
        updates.append(params.uri)

    async with client:
        assert client.server_capabilities["resources"] == {"listChanged": True, "subscribe": True}
        assert await app.notify_resource_updated("text://plain") == 0
        await client.stub.subscribe(types.SubscribeRequestParams(uri="text://plain"))
        assert await app.notify_resource_updated("text://plain") == 1
        assert await app.notify_resource_updated("bin://blob") == 0
        await client.stub.unsubscribe(types.UnsubscribeRequestParams(uri="text://plain"))
        assert await app.notify_resource_updated("text://plain") == 0
        await client.ping()
    assert updates == ["text://plain"]


async def test_stateless_clients_subscribe_through_listen() -> None:
    """2026-07-28 has no resources/subscribe: the app still says ``subscribe`` and its
    updates reach a ``subscriptions/listen`` stream that asked for the URI."""
    from mcpbind.runtime import Client

    app = resources_app()
    async with Client(app, protocol_version=STATELESS) as client:
        assert client.server_capabilities["resources"] == {"listChanged": True, "subscribe": True}
        async with client.listen(resource_subscriptions=["text://plain"]) as sub:
            assert sub.acknowledged == {"resourceSubscriptions": ["text://plain"]}
            assert await app.notify_resource_updated("bin://blob") == 0
            assert await app.notify_resource_updated("text://plain") == 1
            async for notification in sub:
                assert notification.params.uri == "text://plain"
                break


# -- prompts --------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-11-25", STATELESS])
async def test_prompts(revision: str) -> None:
    from app_server import app

    async with wire(app, revision) as peer:
        listed = await peer.result("prompts/list")
        got = await peer.result("prompts/get", {"name": "review", "arguments": {"code": "x = 1"}})
        missing = await peer.request("prompts/get", {"name": "review", "arguments": {}})
        unknown = await peer.request("prompts/get", {"name": "nope"})
    review = next(p for p in listed["prompts"] if p["name"] == "review")
    assert review == {
        "name": "review",
        "description": "Review some code.",
        "arguments": [
            {"name": "code", "required": True},
            {"name": "language", "required": False},
        ],
    }
    assert got["messages"] == [
        {
            "role": "user",
            "content": {"type": "text", "text": "Please review this python code:\nx = 1"},
        }
    ]
    assert got["description"] == "Review some code."
    assert missing["error"]["code"] == -32602
    assert "argument 'code': Field required" in missing["error"]["message"]
    assert unknown["error"] == {
        "code": -32602,
        "message": "Unknown prompt: nope",
        "data": {"name": "nope"},
    }


async def test_prompt_message_forms() -> None:
    from mcpbind.generated.v2025_11_25 import types

    app = App("forms")

    @app.prompt()
    def dialogue(topic: str) -> list[Any]:
        return [
            f"Tell me about {topic}.",
            {"role": "assistant", "content": "Gladly."},
            types.PromptMessage(role="user", content=types.TextContent(text="Go on.")),
        ]

    async with wire(app, "2025-11-25") as peer:
        got = await peer.result("prompts/get", {"name": "dialogue", "arguments": {"topic": "MCP"}})
    assert got["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Tell me about MCP."}},
        {"role": "assistant", "content": {"type": "text", "text": "Gladly."}},
        {"role": "user", "content": {"type": "text", "text": "Go on."}},
    ]


# -- completion -----------------------------------------------------------------------------


def ref_prompt(name: str) -> dict[str, Any]:
    return {"type": "ref/prompt", "name": name}


def ref_resource(uri: str) -> dict[str, Any]:
    return {"type": "ref/resource", "uri": uri}


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-11-25", STATELESS])
async def test_completion(revision: str) -> None:
    from app_server import app

    async def complete(ref: dict[str, Any], name: str, value: str) -> Any:
        params = {"ref": ref, "argument": {"name": name, "value": value}}
        return (await peer.result("completion/complete", params))["completion"]

    async with wire(app, revision) as peer:
        users = await complete(ref_resource("users://{user_id}/profile"), "user_id", "12")
        colours = await complete(ref_prompt("paint"), "colour", "")
        finish = await complete(ref_prompt("paint"), "finish", "g")
        nothing = await complete(ref_prompt("review"), "code", "x")
        unknown = await complete(ref_prompt("nope"), "x", "")
    assert users == {"values": ["12", "123"], "total": 2, "hasMore": False}
    assert colours["values"] == ["red", "green"]
    assert finish["values"] == ["gloss"]
    assert nothing["values"] == [] and unknown["values"] == []


async def test_completion_sees_other_arguments_and_caps_at_100() -> None:
    app = App("many")

    @app.prompt()
    def pick(group: str, item: str) -> str:
        return item

    @app.completion("pick", "item")
    async def items(prefix: str, arguments: dict[str, str]) -> list[str]:
        return [f"{arguments.get('group', '?')}-{i}" for i in range(150)]

    async with wire(app, "2025-11-25") as peer:
        params = {
            "ref": ref_prompt("pick"),
            "argument": {"name": "item", "value": ""},
            "context": {"arguments": {"group": "g"}},
        }
        got = (await peer.result("completion/complete", params))["completion"]
    assert len(got["values"]) == 100 and got["values"][0] == "g-0"
    assert got["total"] == 150 and got["hasMore"] is True
