"""``WWW-Authenticate`` parsing: what servers send, and malformed headers refused clearly."""

from __future__ import annotations

import pytest
from mcpbind.runtime.auth import ChallengeError, bearer_challenge, parse_www_authenticate


def test_a_bearer_challenge_with_every_mcp_parameter() -> None:
    header = (
        'Bearer error="insufficient_scope", scope="files:read files:write", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", '
        'error_description="needs \\"write\\""'
    )
    challenge = bearer_challenge([header])
    assert challenge is not None
    assert challenge.error == "insufficient_scope"
    assert challenge.scopes == ["files:read", "files:write"]
    assert challenge.resource_metadata == (
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    )
    assert challenge.params["error_description"] == 'needs "write"'


def test_several_challenges_tokens_and_token68() -> None:
    found = parse_www_authenticate('Basic abc==, Newauth realm=apps, type=1, Bearer scope="a"')
    assert [(c.scheme, c.token68, c.params) for c in found] == [
        ("Basic", "abc==", {}),
        ("Newauth", None, {"realm": "apps", "type": "1"}),
        ("Bearer", None, {"scope": "a"}),
    ]


def test_the_bearer_challenge_is_found_among_headers_case_insensitively() -> None:
    challenge = bearer_challenge(['Basic realm="x"', 'bearer Scope="mcp"'])
    assert challenge is not None and challenge.scope == "mcp"
    assert bearer_challenge(['Basic realm="x"']) is None
    assert bearer_challenge([]) is None


def test_a_bare_bearer_has_no_parameters() -> None:
    challenge = bearer_challenge(["Bearer"])
    assert challenge is not None and challenge.params == {} and challenge.scopes == []


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ('Bearer scope="unterminated', "unterminated quoted string"),
        ('Bearer scope="a", scope="b"', "given twice"),
        ('Bearer realm="a", scope=', "no parameter value"),
        ('Bearer scope=, error="x"', "token68 with parameters"),
        ('Bearer scope="a" junk', "unexpected"),
        ('"quoted" scope=a', "unexpected"),
        ("Bearer =a", "unexpected"),
        ("Bearer " + "a" * 9000, "longer than"),
        ('Bearer resource_metadata="/relative/path"', "not an absolute URL"),
        ('Bearer resource_metadata="javascript:alert(1)"', "not an absolute URL"),
    ],
)
def test_malformed_headers_are_refused_with_a_clear_error(header: str, message: str) -> None:
    with pytest.raises(ChallengeError, match=message):
        bearer_challenge([header])
