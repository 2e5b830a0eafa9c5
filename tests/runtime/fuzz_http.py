"""The Streamable HTTP fuzzing peer: ``conformance_app.py``, one process for both eras (a
session per handshake-era revision), and the checks of what it answers to a message, a
``subscriptions/listen`` stream and a raw frame."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

import httpx
import orjson
from fuzz_wire import (
    ANSWER_TIMEOUT,
    STATELESS,
    answer_key,
    encode,
    has_lone_surrogate,
    initialize,
    no_traceback,
    probe_message,
    responses_in,
    well_formed,
)
from mcpbind.runtime.core.request_headers import standard_headers

__all__ = ["HttpPeer", "sse_lines"]

HERE = Path(__file__).parent
HTTP_SERVER = str(HERE / "app" / "conformance_app.py")


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
            cwd=HERE.parent.parent,
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
            init = initialize(0, revision, {})
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
        message = probe_message(revision, "probe")
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
            assert answer_key(answers[0]["id"]) in (answer_key(message["id"]), None), (
                message,
                answers,
            )
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
