"""``requestState`` is encrypted, not only signed (``RequestStateKeeper``: AES-256-GCM).

The round trips go through a real server in memory (``raw_client_of``); the keeper is also
driven directly where the property is about the token itself (key ids, the old format).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

import pytest
from mcpbind.runtime import McpError
from mcpbind.runtime.eras.input_required import RequestStateKeeper
from runtime_helpers import raw_client_of
from test_input_required import ELICIT, ELICITED, SAMPLE, call, two_step_server

pytestmark = pytest.mark.anyio

SECRET = "a-secret-of-some-length-0123456789"
#: A distinctive answer, so any trace of it in the token is unmistakable.
NAME = "Zebulon-Quixote"
ANSWER = {"action": "accept", "content": {"name": NAME}}


def raw(token: str) -> bytes:
    """The bytes of a sealed token after its prefix and key id."""
    body = token.rpartition(".")[2]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))


def fragments(text: str, size: int = 5) -> set[bytes]:
    return {text[i : i + size].encode() for i in range(len(text) - size + 1)}


async def test_the_sealed_state_does_not_contain_the_earlier_answers() -> None:
    async with raw_client_of(two_step_server(), initialize=None) as peer:
        first = (await peer.request(call(1)))["result"]
        retry = call(2, inputResponses={ELICIT: ANSWER}, requestState=first["requestState"])
        second = (await peer.request(retry))["result"]
        # The retry is asked the next question, built from the answer: it was read back.
        assert list(second["inputRequests"]) == [SAMPLE]
        text = second["inputRequests"][SAMPLE]["params"]["messages"][0]["content"]["text"]
        assert text == f"Greet {NAME}"
    token = second["requestState"]
    assert token.startswith("mcpbind2.")
    decoded = raw(token)
    # Neither the answer, nor any 5-byte piece of it or of the payload's JSON keys, shows.
    leaks = [piece for piece in fragments(NAME) | fragments(json.dumps(ANSWER)) if piece in decoded]
    assert leaks == []
    assert NAME.encode() not in token.encode()
    for piece in (b'"a":', b'"q":', b'"exp":', b"tools/call", b"accept"):
        assert piece not in decoded


async def test_two_seals_of_one_payload_differ() -> None:
    keeper = RequestStateKeeper(SECRET)
    payload = {"v": 1, "a": {"k": ["d", ANSWER]}}
    first, second = keeper.seal(payload), keeper.seal(payload)
    assert first != second  # a fresh nonce each time: equal answers are not recognisable
    assert keeper.open(first)["a"] == keeper.open(second)["a"] == payload["a"]


def test_rotation_seals_with_the_first_key_and_opens_with_any() -> None:
    old, new = "old-secret-0123456789abcdef", "new-secret-0123456789abcdef"
    before = RequestStateKeeper(old)
    after = RequestStateKeeper(new, previous_keys=[old])
    alone = RequestStateKeeper(new)
    sealed_before = before.seal({"v": 1, "n": 1})
    assert after.open(sealed_before)["n"] == 1
    sealed_after = after.seal({"v": 1, "n": 2})
    # New states name the new key: a keeper holding only the new key opens them.
    assert alone.open(sealed_after)["n"] == 2
    assert sealed_after.split(".")[1] == alone.seal({"v": 1}).split(".")[1]
    assert sealed_after.split(".")[1] != sealed_before.split(".")[1]
    with pytest.raises(McpError, match="integrity"):
        alone.open(sealed_before)


def test_a_state_moved_to_another_key_id_is_refused() -> None:
    one, two = "first-secret-0123456789abcd", "second-secret-0123456789abc"
    keeper = RequestStateKeeper(one, previous_keys=[two])
    token = keeper.seal({"v": 1})
    other_kid = RequestStateKeeper(two).seal({"v": 1}).split(".")[1]
    prefix, _, body = token.split(".", 2)
    with pytest.raises(McpError, match="integrity"):
        keeper.open(f"{prefix}.{other_kid}.{body}")


@pytest.mark.parametrize(
    "token",
    ["mcpbind2.", "mcpbind2.x", "mcpbind2.x.", "mcpbind2..!!", "mcpbind2.abc.AAAA", 7, None],
)
def test_a_malformed_state_is_a_clear_error(token: Any) -> None:
    with pytest.raises(McpError) as caught:
        RequestStateKeeper(SECRET).open(token)
    assert caught.value.code == -32602
    assert "requestState" in str(caught.value)


def signed_v1(secret: bytes, payload: dict[str, Any]) -> str:
    """A state as releases before the encryption sealed it: HMAC-signed, readable JSON."""

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    body = b64(json.dumps(payload).encode())
    mac = hmac.new(secret, f"mcpbind1.{body}".encode(), hashlib.sha256).digest()
    return f"mcpbind1.{body}.{b64(mac)}"


async def test_an_old_signed_state_is_refused_cleanly() -> None:
    secret = b"0123456789abcdef0123456789abcdef"
    old_token = signed_v1(secret, {"v": 1, "a": {}, "q": {}, "exp": int(time.time()) + 60})
    async with raw_client_of(two_step_server(RequestStateKeeper(secret)), initialize=None) as peer:
        reply = await peer.request(
            call(1, inputResponses={ELICIT: ELICITED}, requestState=old_token)
        )
        assert reply["error"]["code"] == -32602
        assert "older format" in reply["error"]["message"]
        # The client starts again without it, as the message says, and that works.
        fresh = (await peer.request(call(2)))["result"]
        assert fresh["resultType"] == "input_required"
