"""The 2026-07-28 half of the conformance fixture: handlers of that revision on the same
``Server`` as the 2025-11-25 ones, so one process in the default configuration serves both
``--requirements`` sets.

What the stateless-era scenarios ask (``conformance-scenarios.txt``): tools answering with an
``InputRequiredResult`` written by hand exactly as the scenarios show (an HMAC-protected
``requestState`` where one is asked for), a prompt doing the same, diagnostic tools of
``server-stateless``, a tool with ``x-mcp-header`` arguments, caching hints on list results.
``subscriptions/listen`` is the runtime's own: the trigger tools raise list changes with
``server.notify_tools_changed()``/``notify_prompts_changed()``, which reach every listener.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from fixture_tasks import HANDLERS as TASK_HANDLERS, TASK_TOOLS
from mcpbind.generated.v2026_07_28 import methods, types
from mcpbind.runtime import INVALID_PARAMS, McpError, RequestContext, Server

#: Results of list methods and reads may be cached this long, by anyone (caching.md).
CACHE = {"resultType": "complete", "ttlMs": 60_000, "cacheScope": "public"}
COMPLETE = {"resultType": "complete"}
MISSING_CAPABILITY = -32021
_KEY = secrets.token_bytes(32)

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def elicit(message: str, schema: dict[str, Any] = NAME_SCHEMA) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {"message": message, "requestedSchema": schema},
    }


def sample(text: str, max_tokens: int) -> dict[str, Any]:
    message = {"role": "user", "content": {"type": "text", "text": text}}
    return {
        "method": "sampling/createMessage",
        "params": {"messages": [message], "maxTokens": max_tokens},
    }


ROOTS = {"method": "roots/list", "params": {}}


def need(requests: dict[str, Any], state: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "input_required", "inputRequests": requests}
    if state is not None:
        result["requestState"] = state
    return result


def sign(payload: dict[str, Any]) -> str:
    """``requestState`` the client cannot alter unnoticed: the payload and its HMAC."""
    raw = base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode()
    mac = hmac.new(_KEY, raw.encode(), hashlib.sha256).hexdigest()
    return f"{raw}.{mac}"


def verify(state: Any) -> dict[str, Any] | None:
    """The payload of a ``requestState`` made by ``sign``; None if absent or tampered with."""
    if type(state) is not str or state.count(".") != 1:
        return None
    raw, mac = state.split(".")
    expected = hmac.new(_KEY, raw.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(mac, expected):
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(raw.encode()))
    except ValueError:
        return None
    return payload if type(payload) is dict else None


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def done(value: str) -> dict[str, Any]:
    return {"content": [text(value)], **COMPLETE}


def _tool(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "inputSchema": schema or {"type": "object", "properties": {}},
    }


MODERN_TOOLS = [
    _tool("test_input_required_result_elicitation", "Asks the user's name by elicitation"),
    _tool("test_input_required_result_sampling", "Asks the client's LLM a question"),
    _tool("test_input_required_result_list_roots", "Asks the client's roots"),
    _tool("test_input_required_result_request_state", "Round-trips a requestState"),
    _tool("test_input_required_result_multiple_inputs", "Asks three things at once"),
    _tool("test_input_required_result_multi_round", "Asks twice, one after the other"),
    _tool("test_input_required_result_tampered_state", "Refuses a requestState altered"),
    _tool("test_input_required_result_capabilities", "Asks only what the client can answer"),
    _tool("test_missing_capability", "Needs the client's sampling capability"),
    _tool("test_streaming_elicitation", "Reports progress, then asks the user"),
    _tool("test_logging_tool", "Logs only when the request asks for a log level"),
    _tool("test_trigger_tool_change", "Tells listeners that the tool list changed"),
    _tool("test_trigger_prompt_change", "Tells listeners that the prompt list changed"),
    _tool(
        "test_header_echo",
        "Mirrors its region and priority into Mcp-Param headers",
        {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "priority": {"type": "integer", "x-mcp-header": "Priority"},
                "query": {"type": "string"},
            },
            "required": ["region"],
        },
    ),
]
#: Tools of the handshake era that send requests to the client: not listed in this era.
HANDSHAKE_ONLY = {
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_reconnection",
    "test_tool_with_logging",
}
INPUT_PROMPT = {
    "name": "test_input_required_result_prompt",
    "description": "A prompt that asks the user for context first",
}


def answer(responses: Any, key: str) -> dict[str, Any] | None:
    value = responses.get(key) if type(responses) is dict else None
    return value if type(value) is dict else None


def accepted_content(responses: Any, key: str) -> dict[str, Any] | None:
    """The ``content`` of an accepted elicitation answer under ``key``, if there is one."""
    reply = answer(responses, key)
    content = reply.get("content") if reply is not None else None
    return content if type(content) is dict else None


def add_modern_handlers(
    server: Server,
    tools: list[dict[str, Any]],
    prompts: list[dict[str, Any]],
    call_common: Callable[[str, dict[str, Any], RequestContext], Awaitable[Any]],
    get_common: Callable[[str, dict[str, Any], RequestContext], Awaitable[Any]],
) -> None:
    """Register the 2026-07-28 handlers; ``call_common``/``get_common`` serve the tools and
    prompts both eras share (the 2025-11-25 handlers, whose results the runtime stamps with
    neutral caching hints here)."""
    listed = [t for t in tools if t["name"] not in HANDSHAKE_ONLY] + MODERN_TOOLS + TASK_TOOLS

    @server.handler(methods.TOOLS_LIST)
    async def list_tools(params: Any, context: RequestContext) -> Any:
        return {"tools": listed, **CACHE}

    @server.handler(methods.PROMPTS_LIST)
    async def list_prompts(params: Any, context: RequestContext) -> Any:
        return {"prompts": [*prompts, INPUT_PROMPT], **CACHE}

    @server.handler(methods.PROMPTS_GET)
    async def get_prompt(params: types.GetPromptRequestParams, context: RequestContext) -> Any:
        if params.name != INPUT_PROMPT["name"]:
            return {**(await get_common(params.name, params.arguments or {}, context)), **COMPLETE}
        raw = params.model_dump(by_alias=True, exclude_none=True, mode="json")
        answered = accepted_content(raw.get("inputResponses"), "user_context")
        if answered is None:
            schema = {
                "type": "object",
                "properties": {"context": {"type": "string"}},
                "required": ["context"],
            }
            return need({"user_context": elicit("What context should the prompt use?", schema)})
        line = f"Use this context: {answered.get('context', '')}"
        return {"messages": [{"role": "user", "content": text(line)}], **COMPLETE}

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(params: types.CallToolRequestParams, context: RequestContext) -> Any:
        name = params.name
        raw = params.model_dump(by_alias=True, exclude_none=True, mode="json")
        responses = raw.get("inputResponses")
        state = params.requestState
        capabilities = context.session.peer.capabilities or {}
        task_tool = TASK_HANDLERS.get(name)
        if task_tool is not None:
            return {**(await task_tool(params.arguments or {}, context)), **COMPLETE}
        if name == "test_input_required_result_elicitation":
            content = accepted_content(responses, "user_name")
            if content is None:
                return need({"user_name": elicit("What is your name?")})
            return done(f"Hello, {content.get('name', '')}!")
        if name == "test_input_required_result_sampling":
            reply = answer(responses, "capital_question")
            if reply is None:
                return need({"capital_question": sample("What is the capital of France?", 100)})
            said = reply.get("content")
            said_text = said.get("text") if type(said) is dict else None
            return done(f"The model said: {said_text or '(no text)'}")
        if name == "test_input_required_result_list_roots":
            reply = answer(responses, "client_roots")
            roots = reply.get("roots") if reply is not None else None
            if type(roots) is not list:
                return need({"client_roots": ROOTS})
            uris = [r.get("uri") for r in roots if type(r) is dict]
            return done(f"Roots: {', '.join(str(u) for u in uris) or '(none)'}")
        if name in (
            "test_input_required_result_request_state",
            "test_input_required_result_tampered_state",
        ):
            payload = verify(state)
            if state is not None and payload is None:
                raise McpError(INVALID_PARAMS, "requestState failed its integrity check")
            if payload is None or answer(responses, "confirm") is None:
                schema = {
                    "type": "object",
                    "properties": {"ok": {"type": "boolean"}},
                    "required": ["ok"],
                }
                return need(
                    {"confirm": elicit("Please confirm", schema)}, sign({"tool": name, "round": 1})
                )
            return done("state-ok: the requestState came back intact")
        if name == "test_input_required_result_multiple_inputs":
            keys = ("user_name", "greeting", "client_roots")
            if verify(state) is None or any(answer(responses, k) is None for k in keys):
                requests = {
                    "user_name": elicit("What is your name?"),
                    "greeting": sample("Generate a greeting", 50),
                    "client_roots": ROOTS,
                }
                return need(requests, sign({"tool": name}))
            return done("Received every input: user_name, greeting, client_roots")
        if name == "test_input_required_result_multi_round":
            payload = verify(state)
            step = payload.get("round") if payload is not None else None
            if step == 1 and accepted_content(responses, "step1") is not None:
                user = accepted_content(responses, "step1") or {}
                schema = {
                    "type": "object",
                    "properties": {"color": {"type": "string"}},
                    "required": ["color"],
                }
                request = elicit("Step 2: What is your favorite color?", schema)
                return need({"step2": request}, sign({"round": 2, "name": user.get("name")}))
            if (
                step == 2
                and payload is not None
                and accepted_content(responses, "step2") is not None
            ):
                color = (accepted_content(responses, "step2") or {}).get("color")
                return done(f"{payload.get('name')} likes {color}")
            return need({"step1": elicit("Step 1: What is your name?")}, sign({"round": 1}))
        if name == "test_input_required_result_capabilities":
            requests: dict[str, Any] = {}
            if "elicitation" in capabilities:
                requests["user_name"] = elicit("What is your name?")
            if "sampling" in capabilities:
                requests["capital_question"] = sample("What is the capital of France?", 100)
            if "roots" in capabilities:
                requests["client_roots"] = ROOTS
            if not requests or all(answer(responses, k) is not None for k in requests):
                return done("Done with what the client can answer")
            return need(requests)
        if name == "test_missing_capability":
            if "sampling" not in capabilities:
                raise McpError(
                    MISSING_CAPABILITY,
                    "Missing required client capability: sampling",
                    {"requiredCapabilities": {"sampling": {}}},
                )
            return done("the client can sample")
        if name == "test_streaming_elicitation":
            await context.report_progress(0, 1)
            await anyio.sleep(0.05)
            return need({"user_name": elicit("What is your name?")})
        if name == "test_logging_tool":
            return done("no log level was asked for, so nothing was logged")
        if name == "test_trigger_tool_change":
            await server.notify_tools_changed()
            return done("tool list change announced")
        if name == "test_trigger_prompt_change":
            await server.notify_prompts_changed()
            return done("prompt list change announced")
        if name == "test_header_echo":
            args = params.arguments or {}
            return done(f"region={args.get('region')}, priority={args.get('priority')}")
        return {**(await call_common(name, params.arguments or {}, context)), **COMPLETE}
