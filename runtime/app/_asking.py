"""What ``Context``'s questions to the client need: the flat schema ``elicitation/create``
takes, the answer's ``ElicitationResult``, and the ``sampling/createMessage`` request. Apart
from ``_context`` (built for every request) so that an app whose functions never ask the
client never loads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic

from mcpbind.runtime.core.errors import CapabilityError
from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema
from typing_extensions import TypeVar

__all__ = ["ElicitationResult", "elicit", "requested_schema", "sampling_params"]

ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass
class ElicitationResult(Generic[ModelT]):
    """The user's answer: ``action`` is ``accept``, ``decline`` or ``cancel``; ``data`` is the
    content validated into the schema's model when accepted (else None); ``raw`` the result."""

    action: str
    data: ModelT | None
    raw: Any


class _FlatSchema(GenerateJsonSchema):
    """Elicitation schemas take no ``anyOf``/null: an optional field is one not required."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        result = super().default_schema(schema)
        if result.get("default") is None:
            result.pop("default", None)
        return result


def requested_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The flat object schema of ``model`` that ``elicitation/create`` takes."""
    schema = model.model_json_schema(schema_generator=_FlatSchema)
    out: dict[str, Any] = {"type": "object", "properties": schema.get("properties", {})}
    if schema.get("required"):
        out["required"] = schema["required"]
    return out


async def elicit(
    peer: Any, revision: str, message: str, schema: type[ModelT]
) -> ElicitationResult[ModelT]:
    """``Context.elicit``: ask through the request's ``peer``, validate an accepted answer."""
    if getattr(peer, "elicit", None) is None:
        raise CapabilityError(f"elicitation is not in protocol revision {revision}")
    params = {"message": message, "requestedSchema": requested_schema(schema)}
    reply = await peer.elicit(params)
    data = None
    if reply.action == "accept":
        data = schema.model_validate(reply.content or {})
    return ElicitationResult(str(reply.action), data, reply)


def sampling_params(
    messages: str | Sequence[Any],
    max_tokens: int,
    system_prompt: str | None,
    temperature: float | None,
    stop_sequences: Sequence[str] | None,
    model_preferences: Any,
) -> dict[str, Any]:
    """``Context.sample``'s request: plain strings as user turns, models dumped as JSON."""
    turns = [messages] if isinstance(messages, str) else list(messages)
    params: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": {"type": "text", "text": turn}}
            if isinstance(turn, str)
            else (
                turn.model_dump(mode="json", by_alias=True, exclude_unset=True)
                if isinstance(turn, BaseModel)
                else turn
            )
            for turn in turns
        ],
        "maxTokens": max_tokens,
    }
    if system_prompt is not None:
        params["systemPrompt"] = system_prompt
    if temperature is not None:
        params["temperature"] = temperature
    if stop_sequences is not None:
        params["stopSequences"] = list(stop_sequences)
    if model_preferences is not None:
        params["modelPreferences"] = model_preferences
    return params
