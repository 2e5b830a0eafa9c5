"""A session id is not a credential: a handshake-era session (Streamable HTTP or the legacy
HTTP+SSE transport) belongs to the identity that opened it, and every request is checked
(on the legacy transport too, for the scopes an operation needs: ``operation_scopes``).

Another user presenting the id, even with a perfectly valid token of their own, finds no
session (404: the session key is, in effect, identity and id together); the owner with a
refreshed token carries on.
"""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from auth_server_kit import protected, sudo_needs_admin, whoami_2025
from httpkit import ACCEPT_BOTH, INITIALIZE, answers, session_headers
from mcpbind.generated.v2025_11_25 import types
from mcpbind.runtime import Client
from mcpbind.runtime.http import sse_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


async def test_a_session_is_bound_to_the_identity_that_opened_it() -> None:
    async with protected() as setup, httpx.AsyncClient() as http:
        alice = setup.good_token(subject="alice")
        opened = await http.post(
            setup.url, json=INITIALIZE, headers=setup.bearer(alice, **ACCEPT_BOTH)
        )
        assert opened.status_code == 200
        sid = opened.headers["mcp-session-id"]
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        ready = await http.post(
            setup.url, json=done, headers=setup.bearer(alice, **session_headers(sid))
        )
        assert ready.status_code == 202

        mallory = setup.good_token(subject="mallory")
        as_mallory = setup.bearer(mallory, **session_headers(sid))
        hijack = await http.post(setup.url, json=whoami_2025(), headers=as_mallory)
        assert hijack.status_code == 404
        assert hijack.json()["error"]["message"] == "Session not found"
        other_client = setup.good_token(subject="alice", client_id="another-app")
        assert (
            await http.post(
                setup.url,
                json=whoami_2025(),
                headers=setup.bearer(other_client, **session_headers(sid)),
            )
        ).status_code == 404
        stream = await http.get(setup.url, headers={**as_mallory, "accept": "text/event-stream"})
        assert stream.status_code == 404
        assert (await http.delete(setup.url, headers=as_mallory)).status_code == 404

        refreshed = setup.good_token(subject="alice")  # a new token for the same user and app
        assert refreshed != alice
        own = await http.post(
            setup.url, json=whoami_2025(), headers=setup.bearer(refreshed, **session_headers(sid))
        )
        assert own.status_code == 200
        assert json.loads(answers(own)[0]["result"]["content"][0]["text"])["subject"] == "alice"
        # Every request is checked, not just the first: the session does not vouch for a token.
        expired = setup.good_token(subject="alice", lifetime=-120)
        late = await http.post(
            setup.url, json=whoami_2025(), headers=setup.bearer(expired, **session_headers(sid))
        )
        assert late.status_code == 401
        assert (
            await http.delete(setup.url, headers=setup.bearer(refreshed, **session_headers(sid)))
        ).status_code == 200


async def test_the_legacy_transport_is_protected_and_bound_too() -> None:
    async with (
        protected(legacy=True, operation_scopes=sudo_needs_admin) as setup,
        httpx.AsyncClient() as http,
    ):
        sse_url = f"{setup.base}/sse"
        refused = await http.get(sse_url, headers={"accept": "text/event-stream"})
        assert refused.status_code == 401
        assert setup.resource_server.resource_metadata_url in refused.headers["www-authenticate"]
        metadata = await http.get(setup.resource_server.resource_metadata_url)
        assert metadata.json()["resource"] == setup.url

        alice = setup.good_token(subject="alice")
        async with Client(sse_client(sse_url, headers=setup.bearer(alice))) as client:
            result = await client.stub.call_tool(types.CallToolRequestParams(name="whoami"))
            assert json.loads(result.content[0].text)["subject"] == "alice"

        async with http.stream(
            "GET", sse_url, headers=setup.bearer(alice, accept="text/event-stream")
        ) as events:
            assert events.status_code == 200
            lines = events.aiter_lines()
            with anyio.fail_after(10):
                while not (line := await lines.__anext__()).startswith("data: "):
                    pass
            endpoint = f"{setup.base}{line.removeprefix('data: ').strip()}"
            body = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            mallory = setup.good_token(subject="mallory")
            as_mallory = setup.bearer(mallory, **{"content-type": "application/json"})
            assert (await http.post(endpoint, json=body, headers=as_mallory)).status_code == 404
            as_alice = setup.bearer(alice, **{"content-type": "application/json"})
            assert (
                await http.post(endpoint, content=json.dumps(INITIALIZE), headers=as_alice)
            ).status_code == 202
            assert (await http.post(endpoint, json=body)).status_code == 401
            sudo = whoami_2025()
            sudo["params"]["arguments"] = {"sudo": True}
            refused = await http.post(endpoint, json=sudo, headers=as_alice)
            assert refused.status_code == 403
            assert 'scope="mcp:tools mcp:admin"' in refused.headers["www-authenticate"]
            admin = setup.good_token("mcp:tools mcp:admin", subject="alice")
            stepped_up = setup.bearer(admin, **{"content-type": "application/json"})
            assert (await http.post(endpoint, json=sudo, headers=stepped_up)).status_code == 202
