"""One handler set for both eras: ``context.peer`` calls become multi round-trip requests in the
stateless era (``basic/patterns/mrtr.md``), with sealed ``requestState``; by hand in memory,
with our client over stdio against the example server (both eras), and with the official SDK."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp
import pytest
from mcp import StdioServerParameters, stdio_client as sdk_stdio_client, types as sdk_types
from mcp.client.context import ClientRequestContext
from mcpbind.generated import v2025_11_25, v2026_07_28
from mcpbind.runtime import CapabilityError, Client, RequestContext, Server, StdioParameters
from mcpbind.runtime.eras.input_required import RequestStateKeeper, _handler_asked
from mcpbind.runtime.eras.stateless import CLIENT_CAPABILITIES, PROTOCOL_VERSION
from pydantic import BaseModel
from runtime_helpers import (
    EXAMPLE_SERVER,
    REPO_ROOT,
    answering_client,
    ask_example_tools,
    raw_client_of,
)

pytestmark = pytest.mark.anyio

new = v2026_07_28.types
old = v2025_11_25.types
ALL_CAPS = {"sampling": {}, "elicitation": {}, "roots": {}}
ELICIT = "elicitation/create#1"
SAMPLE = "sampling/createMessage#2"


def meta(capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        PROTOCOL_VERSION: "2026-07-28",
        CLIENT_CAPABILITIES: ALL_CAPS if capabilities is None else capabilities,
    }


def two_step_server(keeper: RequestStateKeeper | None = None) -> Server:
    """A 2025-11-25 handler (written for the handshake era) that asks twice, then answers."""
    server = Server("rounds", request_state=keeper)
    runs: list[str] = []
    server.runs = runs  # type: ignore[attr-defined]

    @server.handler(v2025_11_25.methods.TOOLS_CALL)
    async def call_tool(params: old.CallToolRequestParams, context: RequestContext) -> Any:
        runs.append(params.name)
        if params.name == "plain":
            return old.CallToolResult(content=[old.TextContent(text="no questions")])
        name = await context.peer.elicit(
            old.ElicitRequestFormParams(
                message="Your name?",
                requestedSchema=old.ElicitRequestFormParamsRequestedSchema(
                    type="object", properties={"name": old.StringSchema(type="string")}
                ),
            )
        )
        who = (name.content or {}).get("name")
        answer = await context.peer.create_message(
            old.CreateMessageRequestParams(
                messages=[
                    old.SamplingMessage(role="user", content=old.TextContent(text=f"Greet {who}"))
                ],
                maxTokens=20,
            )
        )
        return old.CallToolResult(content=[old.TextContent(text=f"{who}: {answer.content.text}")])

    return server


def call(
    request_id: int, name: str = "greet", capabilities: Any = None, **extra: Any
) -> dict[str, Any]:
    params = {"name": name, "arguments": {"n": 1}, "_meta": meta(capabilities), **extra}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


ELICITED = {"action": "accept", "content": {"name": "Ada"}}
SAMPLED = {"role": "assistant", "model": "m", "content": {"type": "text", "text": "Hello Ada"}}


async def test_several_calls_take_several_rounds_and_the_state_carries_the_answers() -> None:
    server = two_step_server()
    async with raw_client_of(server, initialize=None) as peer:
        first = (await peer.request(call(1)))["result"]
        assert first["resultType"] == "input_required"
        assert list(first["inputRequests"]) == [ELICIT]
        assert first["inputRequests"][ELICIT]["method"] == "elicitation/create"
        assert first["inputRequests"][ELICIT]["params"]["message"] == "Your name?"
        state1 = first["requestState"]

        second = (
            await peer.request(call(2, inputResponses={ELICIT: ELICITED}, requestState=state1))
        )["result"]
        assert second["resultType"] == "input_required"
        assert list(second["inputRequests"]) == [SAMPLE]
        assert second["inputRequests"][SAMPLE]["params"]["messages"][0]["content"]["text"] == (
            "Greet Ada"
        )
        state2 = second["requestState"]
        assert state2 != state1

        # The last retry carries only the newest answer: the first one rides in the state.
        done = (await peer.request(call(3, inputResponses={SAMPLE: SAMPLED}, requestState=state2)))[
            "result"
        ]
        assert done == {
            "content": [{"type": "text", "text": "Ada: Hello Ada"}],
            "resultType": "complete",
        }
        assert server.runs == ["greet", "greet", "greet"]  # type: ignore[attr-defined]


async def test_a_missing_input_response_is_asked_for_again() -> None:
    async with raw_client_of(two_step_server(), initialize=None) as peer:
        first = (await peer.request(call(1)))["result"]
        retry = call(2, inputResponses={"unrelated": ELICITED}, requestState=first["requestState"])
        again = (await peer.request(retry))["result"]
        assert again["resultType"] == "input_required"
        assert list(again["inputRequests"]) == [ELICIT]
        # An answer the client seeds its first attempt with counts (the state carries it on).
        seeded = (await peer.request(call(3, inputResponses={ELICIT: ELICITED})))["result"]
        assert list(seeded["inputRequests"]) == [SAMPLE]
        retry = call(4, inputResponses={SAMPLE: SAMPLED}, requestState=seeded["requestState"])
        done = (await peer.request(retry))["result"]
        assert done["content"][0]["text"] == "Ada: Hello Ada"


def tamper(token: str) -> str:
    body, _, mac = token.rpartition(".")
    flipped = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    return f"{flipped}.{mac}"


@pytest.mark.parametrize(
    "forge",
    [tamper, lambda t: t[:-3] + ("xyz" if not t.endswith("xyz") else "abc"), lambda t: "s1"],
    ids=["body", "mac", "foreign-format"],
)
async def test_a_tampered_or_foreign_state_is_invalid_params(forge: Any) -> None:
    async with raw_client_of(two_step_server(), initialize=None) as peer:
        first = (await peer.request(call(1)))["result"]
        state = forge(first["requestState"])
        reply = await peer.request(call(2, inputResponses={ELICIT: ELICITED}, requestState=state))
        assert reply["error"]["code"] == -32602
        assert "requestState" in reply["error"]["message"]


async def test_a_state_is_refused_on_another_request() -> None:
    async with raw_client_of(two_step_server(), initialize=None) as peer:
        state = (await peer.request(call(1)))["result"]["requestState"]
        other_args = call(2, inputResponses={ELICIT: ELICITED}, requestState=state)
        other_args["params"]["arguments"] = {"n": 2}
        reply = await peer.request(other_args)
        assert reply["error"]["code"] == -32602
        assert "another request" in reply["error"]["message"]
        other_tool = call(3, name="plain", requestState=state)
        assert (await peer.request(other_tool))["error"]["code"] == -32602
        # The same state on the request it was made for still works (key order is irrelevant).
        same = call(4, inputResponses={ELICIT: ELICITED}, requestState=state)
        same["params"] = dict(reversed(list(same["params"].items())))
        assert (await peer.request(same))["result"]["resultType"] == "input_required"


async def test_a_state_of_another_key_is_refused_and_a_shared_key_works_across_servers() -> None:
    secret = b"0123456789abcdef0123456789abcdef"
    worker_a = two_step_server(RequestStateKeeper(secret))
    worker_b = two_step_server(RequestStateKeeper(secret))
    stranger = two_step_server()
    async with (
        raw_client_of(worker_a, initialize=None) as a,
        raw_client_of(worker_b, initialize=None) as b,
        raw_client_of(stranger, initialize=None) as c,
    ):
        state = (await a.request(call(1)))["result"]["requestState"]
        retry = call(2, inputResponses={ELICIT: ELICITED}, requestState=state)
        assert list((await b.request(retry))["result"]["inputRequests"]) == [SAMPLE]
        refused = await c.request(retry)
        assert refused["error"]["code"] == -32602


async def test_an_expired_state_is_refused() -> None:
    async with raw_client_of(two_step_server(RequestStateKeeper(ttl=-5)), initialize=None) as peer:
        state = (await peer.request(call(1)))["result"]["requestState"]
        reply = await peer.request(call(2, inputResponses={ELICIT: ELICITED}, requestState=state))
        assert reply["error"]["code"] == -32602
        assert "expired" in reply["error"]["message"]


async def test_an_answer_of_the_wrong_shape_is_invalid_params() -> None:
    async with raw_client_of(two_step_server(), initialize=None) as peer:
        state = (await peer.request(call(1)))["result"]["requestState"]
        bad = {"action": "maybe"}
        reply = await peer.request(call(2, inputResponses={ELICIT: bad}, requestState=state))
        assert reply["error"]["code"] == -32602
        assert ELICIT in reply["error"]["message"]


async def test_a_capability_the_client_lacks_raises_capability_error_in_the_handler() -> None:
    server = Server("caps")
    seen: list[str] = []

    @server.handler(v2026_07_28.methods.TOOLS_CALL)
    async def call_tool(params: new.CallToolRequestParams, context: RequestContext) -> Any:
        if params.name == "caught":
            try:
                await context.peer.list_roots()
            except CapabilityError as exc:
                seen.append(str(exc))
            return new.CallToolResult(content=[], resultType="complete")
        await context.peer.create_message(new.CreateMessageRequestParams(messages=[], maxTokens=1))
        raise AssertionError("not reached")

    async with raw_client_of(server, initialize=None) as peer:
        caught = await peer.request(call(1, name="caught", capabilities={"sampling": {}}))
        assert caught["result"]["resultType"] == "complete"
        assert seen and "'roots' capability" in seen[0]
        # Uncaught, it answers MissingRequiredClientCapabilityError, naming what is missing.
        reply = await peer.request(call(2, name="uncaught", capabilities={"roots": {}}))
        assert reply["error"]["code"] == -32021
        assert reply["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


async def test_the_same_handler_sees_the_same_capability_error_in_the_handshake_era() -> None:
    server = Server("caps")
    seen: list[type[BaseException]] = []

    @server.handler(v2025_11_25.methods.TOOLS_CALL)
    async def call_tool(params: old.CallToolRequestParams, context: RequestContext) -> Any:
        try:
            await context.peer.list_roots()
        except CapabilityError as exc:
            seen.append(type(exc))
        return old.CallToolResult(content=[])

    async with raw_client_of(server) as legacy, raw_client_of(server, initialize=None) as modern:
        await legacy.request(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}
        )
        await modern.request(call(2, capabilities={}))
    assert len(seen) == 2 and all(issubclass(cls, CapabilityError) for cls in seen)


async def test_a_hand_made_input_required_result_keeps_its_own_state() -> None:
    server = Server("manual")
    states: list[Any] = []

    @server.handler(v2026_07_28.methods.TOOLS_CALL)
    async def call_tool(params: new.CallToolRequestParams, context: RequestContext) -> Any:
        states.append(params.requestState)
        if params.requestState is None:
            ask = {"method": "roots/list"}
            return new.InputRequiredResult.model_validate(
                {
                    "resultType": "input_required",
                    "inputRequests": {"mine": ask},
                    "requestState": "7",
                }
            )
        roots = (params.inputResponses or {})["mine"]
        return new.CallToolResult(
            content=[new.TextContent(text=f"{params.requestState}: {roots.roots[0].uri}")],
            resultType="complete",
        )

    async with raw_client_of(server, initialize=None) as peer:
        first = (await peer.request(call(1)))["result"]
        assert list(first["inputRequests"]) == ["mine"]
        sealed = first["requestState"]
        assert sealed != "7"  # sealed like ours: the client cannot change what the handler sees
        answer = {"roots": [{"uri": "file:///r"}]}
        done = await peer.request(call(2, inputResponses={"mine": answer}, requestState=sealed))
        assert done["result"]["content"][0]["text"] == "7: file:///r"
        assert states == [None, "7"]
        refused = await peer.request(call(3, inputResponses={"mine": answer}, requestState="7"))
        assert refused["error"]["code"] == -32602


async def test_a_method_that_may_not_ask_is_not_given_rounds() -> None:
    server = two_step_server()

    @server.handler(v2026_07_28.methods.TOOLS_LIST)
    async def list_tools(params: Any, context: RequestContext) -> Any:
        await context.peer.list_roots()
        raise AssertionError("not reached")

    async with raw_client_of(server, initialize=None) as peer:
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}}
        reply = await peer.request(request)
        assert reply["error"]["code"] == -32603  # never an InputRequiredResult on tools/list


def example_client(version: str) -> tuple[Client, list[str]]:
    """Our client with sampling, elicitation and roots handlers, against the example server."""
    params = StdioParameters(
        *EXAMPLE_SERVER[:1], EXAMPLE_SERVER[1:], cwd=REPO_ROOT, stderr="devnull"
    )
    return answering_client(params, version)


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_the_example_servers_tools_ask_our_client_in_both_eras(version: str) -> None:
    client, asked = example_client(version)
    async with client:
        assert client.session.peer.era == ("stateless" if version == "2026-07-28" else None)
        texts = await ask_example_tools(client, version)
    assert texts == ["the LLM said: Paris", "hello, Ada", "file:///project"]
    assert asked == ["sampling", "elicitation", "roots"]


async def test_the_sdk_client_answers_the_example_servers_input_requests() -> None:
    asked: list[str] = []

    async def sampling(
        context: ClientRequestContext, params: sdk_types.CreateMessageRequestParams
    ) -> sdk_types.CreateMessageResult:
        asked.append("sampling")
        return sdk_types.CreateMessageResult(
            role="assistant", model="m", content=sdk_types.TextContent(type="text", text="Rome")
        )

    async def elicitation(
        context: ClientRequestContext, params: sdk_types.ElicitRequestParams
    ) -> sdk_types.ElicitResult:
        asked.append("elicitation")
        return sdk_types.ElicitResult(action="accept", content={"name": "Grace"})

    async def roots(context: ClientRequestContext) -> sdk_types.ListRootsResult:
        asked.append("roots")
        return sdk_types.ListRootsResult(roots=[sdk_types.Root(uri="file:///sdk")])

    params = StdioServerParameters(
        command=sys.executable, args=EXAMPLE_SERVER[1:], cwd=str(REPO_ROOT)
    )
    async with mcp.Client(
        sdk_stdio_client(params),
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=roots,
    ) as client:
        assert client.protocol_version == "2026-07-28"
        texts = []
        for tool in ("ask_llm", "ask_user", "roots"):
            result = await client.call_tool(tool, {"question": "capital?"})
            assert not result.is_error
            texts.append(result.content[0].text)
    assert texts == ["the LLM said: Rome", "hello, Grace", "file:///sdk"]
    assert asked == ["sampling", "elicitation", "roots"]


async def test_calls_made_at_once_are_asked_in_one_round() -> None:
    server = Server("together")

    @server.handler(v2026_07_28.methods.PROMPTS_GET)
    async def get_prompt(params: new.GetPromptRequestParams, context: RequestContext) -> Any:
        answers: dict[str, Any] = {}

        async def ask_roots() -> None:
            answers["roots"] = await context.peer.list_roots()

        async def ask_user() -> None:
            schema = new.ElicitRequestFormParamsRequestedSchema(type="object", properties={})
            answers["user"] = await context.peer.elicit(
                new.ElicitRequestFormParams(message="ok?", requestedSchema=schema)
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask_roots)
            tg.start_soon(ask_user)
        text = f"{answers['roots'].roots[0].uri} {answers['user'].action}"
        return new.GetPromptResult(
            messages=[new.PromptMessage(role="user", content=new.TextContent(text=text))],
            resultType="complete",
        )

    def get(request_id: int, **extra: Any) -> dict[str, Any]:
        params = {"name": "p", "_meta": meta(), **extra}
        return {"jsonrpc": "2.0", "id": request_id, "method": "prompts/get", "params": params}

    async with raw_client_of(server, initialize=None) as peer:
        first = (await peer.request(get(1)))["result"]
        assert first["resultType"] == "input_required"
        assert sorted(first["inputRequests"]) == ["elicitation/create#2", "roots/list#1"]
        responses = {
            "roots/list#1": {"roots": [{"uri": "file:///both"}]},
            "elicitation/create#2": {"action": "decline"},
        }
        done = await peer.request(
            get(2, inputResponses=responses, requestState=first["requestState"])
        )
        assert done["result"]["messages"][0]["content"]["text"] == "file:///both decline"


async def test_an_input_request_can_be_given_a_name() -> None:
    server = Server("named")

    @server.handler(v2025_11_25.methods.TOOLS_CALL)
    async def call_tool(params: old.CallToolRequestParams, context: RequestContext) -> Any:
        roots = await context.asking("project_roots").list_roots()
        if params.name == "twice":
            await context.asking("project_roots").list_roots()
        return old.CallToolResult(content=[old.TextContent(text=roots.roots[0].uri)])

    async with raw_client_of(server, initialize=None) as peer:
        first = (await peer.request(call(1)))["result"]
        assert first["inputRequests"] == {"project_roots": {"method": "roots/list"}}
        answer = {"project_roots": {"roots": [{"uri": "file:///p"}]}}
        retry = call(2, inputResponses=answer, requestState=first["requestState"])
        assert (await peer.request(retry))["result"]["content"][0]["text"] == "file:///p"
        # One name for two requests is a bug in the handler: an internal error, not a mix-up.
        twice = await peer.request(call(3, name="twice", inputResponses=answer))
        assert twice["error"]["code"] == -32603


async def test_a_state_is_bound_to_its_caller_and_survives_a_key_rotation() -> None:
    old_key, new_key = b"old-key-0123456789abcdef", b"new-key-0123456789abcdef"

    def caller(context: RequestContext) -> str | None:
        user = (context.meta or {}).get("example.com/user")
        return user if isinstance(user, str) else None

    before = two_step_server(RequestStateKeeper(old_key, principal=caller))
    after = two_step_server(RequestStateKeeper(new_key, previous_keys=[old_key], principal=caller))
    as_ada = meta() | {"example.com/user": "ada"}
    async with (
        raw_client_of(before, initialize=None) as first,
        raw_client_of(after, initialize=None) as second,
    ):
        asked = await first.request(call(1))
        state = asked["result"]["requestState"]
        mine = call(2, inputResponses={ELICIT: ELICITED}, requestState=state)
        mine["params"]["_meta"] = as_ada
        stolen = await second.request(mine)
        assert stolen["error"]["code"] == -32602
        assert "caller" in stolen["error"]["message"]

        asked = await first.request({**call(3), "params": {**call(3)["params"], "_meta": as_ada}})
        retry = call(
            4, inputResponses={ELICIT: ELICITED}, requestState=asked["result"]["requestState"]
        )
        retry["params"]["_meta"] = as_ada
        rotated = await second.request(retry)
        assert list(rotated["result"]["inputRequests"]) == [SAMPLE]


async def test_a_failure_beside_a_pending_question_is_an_internal_error_not_a_hang() -> None:
    server = Server("mixed")

    @server.handler(v2026_07_28.methods.TOOLS_CALL)
    async def call_tool(params: new.CallToolRequestParams, context: RequestContext) -> Any:
        async def fail() -> None:
            raise ValueError("broken")

        async with anyio.create_task_group() as tg:
            tg.start_soon(context.peer.list_roots)
            tg.start_soon(fail)
        raise AssertionError("not reached")

    async with raw_client_of(server, initialize=None) as peer:
        reply = await peer.request(call(1))
        assert reply["error"]["code"] == -32603


async def test_a_typed_handshake_era_peer_asks_a_stateless_client_too() -> None:
    """``peer_as`` with the stub of the handler's own revision (2025-11-25) works when the
    request came in the stateless era: its call becomes an input request like ``peer``'s."""
    server = Server("typed")

    @server.handler(v2025_11_25.methods.TOOLS_CALL)
    async def call_tool(params: old.CallToolRequestParams, context: RequestContext) -> Any:
        stub = context.peer_as(v2025_11_25.client.ServerStub)
        roots: old.ListRootsResult = await stub.list_roots()
        return old.CallToolResult(content=[old.TextContent(text=roots.roots[0].uri)])

    async with raw_client_of(server, initialize=None) as peer:
        first = (await peer.request(call(1)))["result"]
        assert first["resultType"] == "input_required"
        (key,) = first["inputRequests"]
        assert first["inputRequests"][key]["method"] == "roots/list"
        answer = {key: {"roots": [{"uri": "file:///typed"}]}}
        retry = call(2, inputResponses=answer, requestState=first["requestState"])
        done = (await peer.request(retry))["result"]
        assert done["content"] == [{"type": "text", "text": "file:///typed"}]


class _OwnResult(BaseModel):
    resultType: str


def test_a_result_is_read_for_its_kind_without_dumping_what_cannot_ask() -> None:
    text: list[Any] = [v2025_11_25.types.TextContent(text="a")]
    asked = {"resultType": "input_required", "inputRequests": {}}
    # A generated model says so in its field, or (a handshake revision's) in its extras.
    assert _handler_asked(new.CallToolResult(content=[new.TextContent(text="a")])) is None
    assert _handler_asked(v2025_11_25.types.CallToolResult(content=text)) is None
    extra = v2025_11_25.types.CallToolResult.model_validate({"content": [], **asked})
    assert _handler_asked(extra) == {"content": [], **asked}
    model = new.InputRequiredResult.model_validate({**asked, "requestState": "s"})
    assert _handler_asked(model)["requestState"] == "s"
    # Plain data and other models are read as data.
    assert _handler_asked(dict(asked)) == asked
    assert _handler_asked({"resultType": "complete"}) is None
    assert _handler_asked(_OwnResult(resultType="input_required")) == {
        "resultType": "input_required"
    }
    assert _handler_asked(_OwnResult(resultType="complete")) is None
