"""Fuzzing every client-to-server method of every pinned revision against real servers.

Shared by ``tests/runtime/test_fuzz_methods.py`` (a few examples per method) and
``bench/fuzz.py`` (many). A message is drawn from the revision's ``schema.json``
(hypothesis-jsonschema, ``generated_helpers.strategy_for``), then mutated (members dropped,
added or of the wrong type; huge, deep, odd Unicode, lone surrogates; params that are no
object; ids of every kind) or replaced by a raw frame (invalid UTF-8, truncated JSON, batches,
huge ids). The peers send it to a server process (``app_server.py`` on stdio,
``conformance_app.py`` on Streamable HTTP) and ``check_*`` assert what every answer must be.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import httpx
import orjson
from generated_helpers import REVISIONS, definitions, strategy_for
from hypothesis import strategies as st
from mcpbind.runtime import INTERNAL_ERROR
from mcpbind.runtime.core.request_headers import standard_headers

HERE = Path(__file__).parent
REPO_ROOT = HERE.parent.parent
STDIO_SERVER = str(HERE / "app" / "app_server.py")
HTTP_SERVER = str(HERE / "app" / "conformance_app.py")
STATELESS: Final = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
#: Seconds an answer may take before the server counts as hung.
ANSWER_TIMEOUT = 20.0


def methods_of(revision: str) -> list[tuple[str, str, bool]]:
    """(definition, method, is a request) of each message a client sends in ``revision``."""
    found = []
    defs = definitions(revision)
    for union, is_request in (("ClientRequest", True), ("ClientNotification", False)):
        schema = defs[union].schema
        refs = [item["$ref"] for item in schema["anyOf"]] if "anyOf" in schema else []
        names = [ref.rsplit("/", 1)[1] for ref in refs] or [union]
        if not refs:  # one message only: the union is the definition itself
            method = schema["properties"]["method"]["const"]
            found.append((union, method, is_request))
            continue
        for name in names:
            method = defs[name].schema["properties"]["method"]["const"]
            found.append((name, method, is_request))
    return found


CASES: list[tuple[str, str, str, bool]] = [
    (revision, name, method, is_request)
    for revision in REVISIONS
    for name, method, is_request in methods_of(revision)
]

# -- mutations --------------------------------------------------------------------------------

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
odd_text = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=40),
    st.sampled_from(
        ["\x00", "\u202e\u2066evil", "\uffff\ufffe", "💥" * 50, "e\u0301" * 30, "\r\n\t", "\\"]
    ),
    st.sampled_from(["\ud800", "lone \udfff surrogate", "\udc80\ud800"]),
)


def _huge(kind: int) -> Any:
    if kind == 0:
        return "x" * 300_000
    if kind == 1:
        return list(range(20_000))
    return {f"k{i}": i for i in range(5_000)}


def _deep(depth: int, as_dict: bool) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"a": value} if as_dict else [value]
    return value


def _paths(value: Any, at: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    """Every place inside ``value`` (dict keys, list indices), down to six levels."""
    if len(at) >= 6:
        return
    items = (
        value.items() if type(value) is dict else enumerate(value) if type(value) is list else ()
    )
    for key, inner in items:
        yield (*at, key)
        yield from _paths(inner, (*at, key))


def _replaced(value: Any, path: tuple[Any, ...], replacement: Any) -> Any:
    """A copy of ``value`` with what is at ``path`` replaced."""
    if not path:
        return replacement
    head, rest = path[0], path[1:]
    if type(value) is dict:
        return {**value, head: _replaced(value[head], rest, replacement)}
    copy = list(value)
    copy[head] = _replaced(value[head], rest, replacement)
    return copy


@st.composite
def mutated(draw: st.DrawFn, value: Any) -> Any:
    """``value`` (a drawn params object) changed in one of the ways the module names."""
    kind = draw(
        st.sampled_from(
            ["none", "drop", "extra", "wrong", "huge", "deep", "odd", "not-object", "known"]
            + ["nested"] * 3
        )
    )
    if kind == "none":
        return value
    if kind == "nested":
        paths = list(_paths(value, ()))
        if not paths:
            return value
        path = draw(st.sampled_from(paths))
        replacement = draw(st.one_of(json_value, odd_text, st.builds(_huge, st.integers(0, 2))))
        return _replaced(value, path, replacement)
    if kind == "not-object":
        return draw(st.one_of(st.lists(json_leaf, max_size=3), json_leaf))
    target = value if isinstance(value, dict) else {}
    target = dict(target)
    keys = sorted(target)
    if kind == "drop" and keys:
        del target[draw(st.sampled_from(keys))]
        return target
    key = (
        draw(st.sampled_from(keys)) if keys and draw(st.booleans()) else draw(st.text(max_size=10))
    )
    if kind == "extra":
        target[draw(st.text(min_size=1, max_size=10))] = draw(json_value)
    elif kind == "wrong":
        target[key] = draw(json_value)
    elif kind == "huge":
        target[key] = _huge(draw(st.integers(0, 2)))
    elif kind == "deep":
        target[key] = _deep(draw(st.integers(50, 250)), draw(st.booleans()))
    elif kind == "odd":
        target[key] = draw(odd_text)
    else:  # "known": a name the server has, so the handler behind it runs
        target["name"] = draw(st.sampled_from(KNOWN_NAMES))
        if draw(st.booleans()):
            target["arguments"] = draw(st.dictionaries(st.sampled_from(KNOWN_ARGS), json_value))
    return target


#: Tool, prompt and argument names of the example servers, so that handlers run too (not
#: ``slow``, which counts to its ``steps``: drawn huge, it runs for ever, as it should).
KNOWN_NAMES: Final = [
    "add", "weather", "greet", "echo", "review", "paint", "test_simple_text",
    "test_error_handling", "test_prompt_with_arguments", "test_tool_with_progress",
]  # fmt: skip
KNOWN_ARGS: Final = ["a", "b", "city", "steps", "code", "language", "colour", "arg1", "text"]

request_ids = st.one_of(
    st.integers(min_value=1, max_value=2**53),
    st.text(min_size=1, max_size=30),
)
odd_ids = st.one_of(
    st.integers(min_value=2**64, max_value=2**80),
    st.just(-1),
    st.just(""),
    st.just("x" * 5000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)


@st.composite
def messages(draw: st.DrawFn, revision: str, name: str, is_request: bool) -> dict[str, Any]:
    """A message of definition ``name``, drawn from the schema and then mutated."""
    drawn = draw(strategy_for(revision, name), label=name)
    params = drawn.get("params") if isinstance(drawn, dict) else None
    if revision == STATELESS and isinstance(params, dict):
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        params = {**params, "_meta": {**meta, META_VERSION: STATELESS, META_CAPABILITIES: {}}}
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": drawn["method"]}
    new_params = draw(mutated(params))
    if new_params is not None or draw(st.booleans()):
        message["params"] = new_params
    if is_request:
        message["id"] = draw(st.one_of(request_ids, request_ids, odd_ids))
    return message


def has_lone_surrogate(value: Any) -> bool:
    """Whether a lone surrogate is anywhere in ``value``: its JSON cannot be read as UTF-8
    text, so the only answer is a parse error (id null), even to a notification."""
    if type(value) is str:
        return any("\ud800" <= c <= "\udfff" for c in value)
    if type(value) is dict:
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    if type(value) is list:
        return any(has_lone_surrogate(v) for v in value)
    return False


def encode(message: Any) -> bytes:
    """The message's JSON: UTF-8 where orjson can write it, else escaped by the standard
    library (integers beyond 64 bits, lone surrogates as ``\\ud800``)."""
    try:
        return orjson.dumps(message)
    except orjson.JSONEncodeError:
        return json.dumps(message).encode()


RAW_FRAMES: Final[list[bytes]] = [
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff\xfe"}}',
    b'{"jsonrpc":"2.0","id":2,"method":"tools/list"',
    b'{"jsonrpc":"2.0","id":3,"method":',
    b"[]",
    b"[1,2,3]",
    b'[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"nope"},7]',
    b'[{"jsonrpc":"2.0","method":"notifications/initialized"}]',
    b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":-0.0,"method":"ping"}',
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a":' * 5000 + b"1" + b"}" * 5000,
    b"null",
    b'"just a string"',
    b"42",
    b"{}",
    b'{"jsonrpc":"1.0","id":6,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":7,"method":7}',
    b'{"jsonrpc":"2.0","id":8,"method":"ping","params":"no"}',
    b'{"jsonrpc":"2.0","id":9,"result":{}}',
    b'{"jsonrpc":"2.0","id":10,"error":{"code":"x"}}',
    b'{"jsonrpc":"2.0","id":11,"method":"\xc3\x28"}',
    b"\xef\xbb\xbf" + b'{"jsonrpc":"2.0","id":12,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":13,"method":"ping","params":{"_meta":{"progressToken":NaN}}}',
    b'{"jsonrpc":"2.0","id":14,"method":"ping","id":15}',
    b"\x00\x01\x02",
]
raw_frames = st.one_of(
    st.sampled_from(RAW_FRAMES),
    st.binary(max_size=200).filter(lambda frame: b"\n" not in frame),
    st.builds(lambda frame, cut: frame[:cut], st.sampled_from(RAW_FRAMES), st.integers(1, 60)),
)


def record(transport: str, revision: str, method: str) -> None:
    """Count one example checked, for ``bench/fuzz.py`` (``MCPBIND_FUZZ_REPORT``: a file)."""
    report = os.environ.get("MCPBIND_FUZZ_REPORT")
    if report:
        with open(report, "a") as file:
            file.write(f"{transport}\t{revision}\t{method}\n")


# -- what every answer must be ----------------------------------------------------------------


def no_traceback(text: str) -> None:
    assert "Traceback (most recent call last)" not in text, text[:2000]
    assert '.py", line ' not in text, text[:2000]


def well_formed(answer: Any) -> None:
    """A JSON-RPC response: version, id, and exactly one of a result or a proper error."""
    assert type(answer) is dict, answer
    assert answer.get("jsonrpc") == "2.0", answer
    assert "id" in answer and type(answer["id"]) in (int, str, type(None)), answer
    assert ("result" in answer) != ("error" in answer), answer
    if "error" in answer:
        error = answer["error"]
        assert type(error) is dict and type(error.get("code")) is int, answer
        assert type(error.get("message")) is str, answer
        # Bad input is the client's error: a handler that failed on it answers -32603.
        assert error["code"] != INTERNAL_ERROR, answer


def responses_in(parsed: Any) -> list[dict[str, Any]]:
    """The responses among what a server wrote (a batch's array counts each)."""
    items = parsed if type(parsed) is list else [parsed]
    return [item for item in items if type(item) is dict and "method" not in item]


# -- stdio ------------------------------------------------------------------------------------


class StdioPeer:
    """``app_server.py`` over stdio at one revision; lines written and read with deadlines."""

    def __init__(self, revision: str) -> None:
        self.revision = revision
        self.process = subprocess.Popen(
            [sys.executable, STDIO_SERVER],
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.buffer = b""
        self.probes = 0
        if revision != STATELESS:
            init = {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": revision,
                    "capabilities": {"roots": {}, "sampling": {}, "elicitation": {}},
                    "clientInfo": {"name": "fuzz", "version": "0"},
                },
            }
            self.write(orjson.dumps(init))
            self.until({"init"})
            self.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def close(self) -> None:
        self.process.kill()
        self.process.wait()

    def write(self, frame: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(frame + b"\n")
        self.process.stdin.flush()

    def lines(self, deadline: float) -> Iterator[bytes]:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                yield line
            left = deadline - time.monotonic()
            assert left > 0, f"no answer within {ANSWER_TIMEOUT} s: the server hangs"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                assert chunk, f"the server exited (status {self.process.poll()})"
                self.buffer += chunk

    def until(self, ids: set[Any]) -> list[Any]:
        """What the server writes until it has answered every id in ``ids``; its own requests
        (sampling, elicitation, roots) are answered with an error at once."""
        seen: list[Any] = []
        waiting = set(ids)
        for line in self.lines(time.monotonic() + ANSWER_TIMEOUT):
            text = line.decode("utf-8")  # a server writes UTF-8 only
            no_traceback(text)
            parsed = json.loads(text)
            seen.append(parsed)
            for item in parsed if type(parsed) is list else [parsed]:
                if type(item) is dict and "method" in item and "id" in item:
                    refusal = {
                        "jsonrpc": "2.0",
                        "id": item["id"],
                        "error": {"code": -1, "message": "no"},
                    }
                    self.write(orjson.dumps(refusal))
            for response in responses_in(parsed):
                waiting.discard(_key(response.get("id")))
            if not waiting:
                return seen

    def probe(self) -> dict[str, Any]:
        """The liveness probe: ``ping`` (``server/discover`` in the stateless era)."""
        self.probes += 1
        probe_id = f"probe-{self.probes}"
        if self.revision == STATELESS:
            meta = {META_VERSION: STATELESS, META_CAPABILITIES: {}}
            message = {
                "jsonrpc": "2.0",
                "id": probe_id,
                "method": "server/discover",
                "params": {"_meta": meta},
            }
        else:
            message = {"jsonrpc": "2.0", "id": probe_id, "method": "ping"}
        self.write(orjson.dumps(message))
        answers = [
            r for m in self.until({probe_id}) for r in responses_in(m) if r.get("id") == probe_id
        ]
        assert len(answers) == 1 and "result" in answers[0], answers
        return answers[0]

    def check_message(self, message: dict[str, Any]) -> None:
        """One well-formed answer for a request (to its id, or to null when the id itself is
        not one), none for a notification; the session alive after."""
        self.write(encode(message))
        self.probes += 1
        probe_id = f"probe-{self.probes}"
        probe = self._probe_message(probe_id)
        self.write(orjson.dumps(probe))
        seen = self.until({probe_id})
        answers = [r for m in seen for r in responses_in(m) if r.get("id") != probe_id]
        for answer in answers:
            well_formed(answer)
        request_id = message.get("id", _ABSENT)
        if has_lone_surrogate(message):
            assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
                (None, -32700)
            ], (message, answers)
            return
        if request_id is _ABSENT:
            assert answers == [], (message, answers)
            return
        if answers == [] and message["method"] == "subscriptions/listen":
            # An open subscription is answered when it ends: the client ends it by cancelling.
            cancel = {"method": "notifications/cancelled", "params": {"requestId": request_id}}
            self.write(encode({"jsonrpc": "2.0", **cancel}))
            self.probe()
            return
        if answers == [] and _key(request_id) is not None:
            # A slow handler may answer after the probe: wait for it.
            seen = self.until({_key(request_id)})
            answers = [r for m in seen for r in responses_in(m)]
        assert len(answers) == 1, (message, answers)
        assert _key(answers[0]["id"]) in (_key(request_id), None), (message, answers)

    def check_batch(self, batch: list[dict[str, Any]]) -> None:
        """A JSON-RPC batch (revisions that have them): one array answering each of its
        requests once (ids unique), nothing for notifications only; alive after."""
        self.write(encode(batch))
        self.probes += 1
        probe_id = f"probe-{self.probes}"
        self.write(orjson.dumps(self._probe_message(probe_id)))
        request_ids = {m["id"] for m in batch if "id" in m}
        unreadable = has_lone_surrogate(batch)  # one parse error, for the whole line
        seen = self.until({probe_id} if unreadable else {probe_id, *request_ids})
        arrays = [m for m in seen if type(m) is list]
        singles = [m for m in seen if type(m) is dict and "method" not in m and m["id"] != probe_id]
        for answer in [r for a in arrays for r in responses_in(a)] + singles:
            well_formed(answer)
        if unreadable:
            assert [(a["id"], a["error"]["code"]) for a in singles] == [(None, -32700)], seen
            return
        if not request_ids:
            assert arrays == [] and singles == [], seen
            return
        assert len(arrays) == 1 and singles == [], seen
        answered = sorted(str(r["id"]) for r in responses_in(arrays[0]))
        assert answered == sorted(str(i) for i in request_ids), (batch, arrays)

    def check_frame(self, frame: bytes) -> None:
        """Whatever a raw frame is, every answer is well-formed, one line at most, and the
        session is alive after."""
        self.write(frame)
        self.probes += 1
        probe_id = f"probe-{self.probes}"
        self.write(orjson.dumps(self._probe_message(probe_id)))
        seen = self.until({probe_id})
        others = [m for m in seen if not (type(m) is dict and m.get("id") == probe_id)]
        assert len([m for m in others if responses_in(m)]) <= 1, (frame[:200], others)
        for answer in (r for m in others for r in responses_in(m)):
            well_formed(answer)

    def _probe_message(self, probe_id: str) -> dict[str, Any]:
        if self.revision == STATELESS:
            meta = {META_VERSION: STATELESS, META_CAPABILITIES: {}}
            return {
                "jsonrpc": "2.0",
                "id": probe_id,
                "method": "server/discover",
                "params": {"_meta": meta},
            }
        return {"jsonrpc": "2.0", "id": probe_id, "method": "ping"}


_ABSENT: Final = object()


def _key(request_id: Any) -> Any:
    """A request id as the server reads it back (an id that is no JSON-RPC id: None)."""
    if type(request_id) is str:
        return request_id
    if type(request_id) is int:
        return request_id
    return None


# -- Streamable HTTP --------------------------------------------------------------------------


def sse_lines(text: str) -> list[str]:
    """An event stream's lines: SSE ends them with CR, LF or CRLF only (``str.splitlines``
    also splits at U+0085, U+2028 and others, which JSON carries unescaped)."""
    return re.split(r"\r\n|\r|\n", text)


BOTH: Final = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


class HttpPeer:
    """``conformance_app.py`` on Streamable HTTP: one server process for both eras."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, HTTP_SERVER, "--port", "0"],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().decode().strip()
        assert self.url.startswith("http://"), self.url
        self.http = httpx.Client(timeout=ANSWER_TIMEOUT)
        self.sessions: dict[str, dict[str, str]] = {}

    def close(self) -> None:
        self.http.close()
        self.process.kill()
        self.process.wait()

    def session(self, revision: str) -> dict[str, str]:
        """The headers of this peer's session at ``revision`` (opened on first use)."""
        headers = self.sessions.get(revision)
        if headers is None:
            init = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": revision,
                    "capabilities": {},
                    "clientInfo": {"name": "fuzz", "version": "0"},
                },
            }
            response = self.http.post(self.url, json=init, headers=BOTH)
            assert response.status_code == 200, response.text
            headers = {
                **BOTH,
                "mcp-session-id": response.headers["mcp-session-id"],
                "mcp-protocol-version": revision,
            }
            done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert self.http.post(self.url, json=done, headers=headers).status_code == 202
            self.sessions[revision] = headers
        return headers

    def headers_for(self, revision: str, message: Any) -> dict[str, str]:
        if revision != STATELESS:
            return self.session(revision)
        try:
            found = standard_headers(message) if type(message) is dict else {}
        except UnicodeEncodeError:  # a lone surrogate in the name: sent without it
            found = {}
        headers = {**BOTH, "mcp-protocol-version": STATELESS}
        headers.update({k.lower(): v for k, v in found.items() if v.isascii() and v.isprintable()})
        return headers

    def post(self, revision: str, body: bytes, message: Any = None) -> httpx.Response:
        response = self.http.post(
            self.url, content=body, headers=self.headers_for(revision, message)
        )
        no_traceback(response.text)
        assert response.status_code < 500, (response.status_code, response.text[:500])
        return response

    def answers(self, response: httpx.Response) -> list[Any]:
        if response.status_code == 202 or not response.content:
            return []
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return [
                json.loads(line[6:])
                for line in sse_lines(response.text)
                if line.startswith("data: ") and line[6:].strip()
            ]
        return [response.json()]

    def probe(self, revision: str) -> None:
        if revision == STATELESS:
            meta = {META_VERSION: STATELESS, META_CAPABILITIES: {}}
            message = {
                "jsonrpc": "2.0",
                "id": "probe",
                "method": "server/discover",
                "params": {"_meta": meta},
            }
        else:
            message = {"jsonrpc": "2.0", "id": "probe", "method": "ping"}
        response = self.post(revision, orjson.dumps(message), message)
        assert response.status_code == 200, response.text
        (answer,) = [r for a in self.answers(response) for r in responses_in(a)]
        assert "result" in answer, answer

    def check_message(self, revision: str, message: dict[str, Any]) -> None:
        if message["method"] == "subscriptions/listen":
            self.check_listen(revision, message)
            return
        response = self.post(revision, encode(message), message)
        answers = [r for a in self.answers(response) for r in responses_in(a)]
        for answer in answers:
            well_formed(answer)
        if has_lone_surrogate(message):
            assert response.status_code == 400, (response.status_code, answers)
            assert [a.get("error", {}).get("code") for a in answers] == [-32700], answers
        elif "id" not in message or response.status_code >= 400:
            assert len(answers) <= 1, answers
        else:
            assert len(answers) == 1, (message, response.status_code, answers)
            assert _key(answers[0]["id"]) in (_key(message["id"]), None), (message, answers)
        self.probe(revision)

    def check_listen(self, revision: str, message: dict[str, Any]) -> None:
        """An accepted ``subscriptions/listen`` is an SSE stream that stays open: read what
        comes within a second, then close it (the server ends the subscription)."""
        headers = self.headers_for(revision, message)
        timeout = httpx.Timeout(ANSWER_TIMEOUT, read=1.0)
        with self.http.stream(
            "POST", self.url, content=encode(message), headers=headers, timeout=timeout
        ) as response:
            assert response.status_code < 500, response.status_code
            text = ""
            try:
                for chunk in response.iter_text():
                    text += chunk
            except httpx.ReadTimeout:
                assert response.headers["content-type"].startswith("text/event-stream")
            no_traceback(text)
            for line in sse_lines(text):
                if line.startswith("data: ") and line[6:].strip():
                    for answer in responses_in(json.loads(line[6:])):
                        well_formed(answer)
        self.probe(revision)

    def check_frame(self, revision: str, frame: bytes) -> None:
        response = self.post(revision, frame)
        for answer in (r for a in self.answers(response) for r in responses_in(a)):
            well_formed(answer)
        self.probe(revision)
