"""The stdio fuzzing peer: ``app_server.py`` at one revision, lines written and read with
deadlines, and the checks of what it answers to a message, a batch and a raw frame."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from fuzz_wire import (
    ABSENT,
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

__all__ = ["StdioPeer"]

HERE = Path(__file__).parent
STDIO_SERVER = str(HERE / "app" / "app_server.py")


class StdioPeer:
    """``app_server.py`` over stdio at one revision; lines written and read with deadlines."""

    def __init__(self, revision: str) -> None:
        self.revision = revision
        self.process = subprocess.Popen(
            [sys.executable, STDIO_SERVER],
            cwd=HERE.parent.parent,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.buffer = b""
        self.probes = 0
        if revision != STATELESS:
            capabilities: dict[str, Any] = {"roots": {}, "sampling": {}, "elicitation": {}}
            self.write(orjson.dumps(initialize("init", revision, capabilities)))
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
                waiting.discard(answer_key(response.get("id")))
            if not waiting:
                return seen
        raise AssertionError("unreachable: lines() ends only by failing")

    def send_probe(self) -> str:
        """Send the liveness probe under a new id; returns the id."""
        self.probes += 1
        probe_id = f"probe-{self.probes}"
        self.write(orjson.dumps(probe_message(self.revision, probe_id)))
        return probe_id

    def probe(self) -> dict[str, Any]:
        """The liveness probe: ``ping`` (``server/discover`` in the stateless era), answered."""
        probe_id = self.send_probe()
        answers = [
            r for m in self.until({probe_id}) for r in responses_in(m) if r.get("id") == probe_id
        ]
        assert len(answers) == 1 and "result" in answers[0], answers
        return answers[0]

    def check_message(self, message: dict[str, Any]) -> None:
        """One well-formed answer for a request (to its id, or to null when the id itself is
        not one), none for a notification; the session alive after."""
        self.write(encode(message))
        probe_id = self.send_probe()
        seen = self.until({probe_id})
        answers = [r for m in seen for r in responses_in(m) if r.get("id") != probe_id]
        for answer in answers:
            well_formed(answer)
        request_id = message.get("id", ABSENT)
        if has_lone_surrogate(message):
            assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
                (None, -32700)
            ], (message, answers)
            return
        if request_id is ABSENT:
            assert answers == [], (message, answers)
            return
        if answers == [] and message["method"] == "subscriptions/listen":
            # An open subscription is answered when it ends: the client ends it by cancelling.
            cancel = {"method": "notifications/cancelled", "params": {"requestId": request_id}}
            self.write(encode({"jsonrpc": "2.0", **cancel}))
            self.probe()
            return
        if answers == [] and answer_key(request_id) is not None:
            # A slow handler may answer after the probe: wait for it.
            seen = self.until({answer_key(request_id)})
            answers = [r for m in seen for r in responses_in(m)]
        assert len(answers) == 1, (message, answers)
        assert answer_key(answers[0]["id"]) in (answer_key(request_id), None), (message, answers)

    def check_batch(self, batch: list[dict[str, Any]]) -> None:
        """A JSON-RPC batch (revisions that have them): one array answering each of its
        requests once (ids unique), nothing for notifications only; alive after."""
        self.write(encode(batch))
        probe_id = self.send_probe()
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
        probe_id = self.send_probe()
        seen = self.until({probe_id})
        others = [m for m in seen if not (type(m) is dict and m.get("id") == probe_id)]
        assert len([m for m in others if responses_in(m)]) <= 1, (frame[:200], others)
        for answer in (r for m in others for r in responses_in(m)):
            well_formed(answer)
