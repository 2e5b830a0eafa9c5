"""The cross-era result check, proven once per pair of classes instead of run whole per call.

A handler written for a handshake revision serves stateless-era requests too; its result must
then be valid under the served revision's result type as well (``Route.check``). Validating the
whole dumped result again cost 17.5k instructions of a 2026-07-28 echo call, and most of it
proved nothing: the two revisions' ``CallToolResult`` type ``content``, ``isError`` and
``structuredContent`` alike, and differ in ``_meta`` (a ``MetaObject`` in 2026-07-28) and
``resultType`` (2026-07-28 only).

So, once per pair (the class the result was, the type it must be), the two pydantic core schemas
are compared field by field. A field of the target is *proven* when the source has a field that
is written under the key the target reads, whose validation schema is the target's (compared
node by node, titles, names, refs and metadata aside) and whose dump always validates again
under it (``_round_trips``: no float that may be NaN, no serializer of its own, a tagged
union's tag always written, ...). Per call, only the other fields of the target are validated,
each with the target's own schema for it: an absent optional one costs a lookup. Whatever the
comparison does not know is not proven: a node type or key outside the short lists below, a
function validator other than pydantic's bounds and the generated ``integer`` check, a model
with its own ``__init__`` or ``model_post_init``, a target that forbids extra keys. A pair with
nothing provable, or any doubt per call (a field that fails, an unknown tag), runs the full
validation as before, so a failure raises the very ``ValidationError`` it raised before.

The premise is the runtime's own for results of the served revision, which are never checked: an
instance of a model class holds what that class validates (``model_construct`` and attribute
assignment are the caller's promise). A plain dict a handler returns is validated under its
revision's class before it gets here, so that premise holds for it by construction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from mcpbind.generated.support import MethodSpec
from mcpbind.runtime.core.bindings import validator
from mcpbind.runtime.core.bounded import remember
from mcpbind.runtime.core.routing import ResultCheck

from ._proof_code import compiled
from ._proofs import UNPROVEN, Proof, prove_pair

__all__ = ["Proof", "cross_era_check", "proof_function", "prove"]

_PROOFS: dict[tuple[Any, Any, frozenset[str]], tuple[Proof, Callable[[Any], bool]]] = {}
#: Pairs kept (all dropped when full): classes made at run time must not grow it without end.
_MAX_PROOFS: Final = 512


def _proven(kind: Any, target: Any, stamped: frozenset[str]) -> tuple[Proof, Callable[[Any], bool]]:
    key = (kind, target, stamped)
    found = _PROOFS.get(key)
    if found is None:
        try:
            proof = prove_pair(kind, target, stamped)
        except Exception:  # a schema of a shape not foreseen: validate as before
            proof = UNPROVEN
        found = remember(_PROOFS, key, (proof, compiled(proof)), _MAX_PROOFS)
    return found


def prove(kind: Any, target: Any, stamped: frozenset[str] = frozenset()) -> Proof:
    """The proof for results of class ``kind`` checked under ``target`` (a model class, or a
    union of them decided by a tag), computed once per pair; ``UNPROVEN`` when it cannot be.
    ``stamped``: the keys the runtime may add to a result after its dump (always checked)."""
    return _proven(kind, target, stamped)[0]


def proof_function(
    kind: Any, target: Any, stamped: frozenset[str] = frozenset()
) -> Callable[[Any], bool]:
    """``prove(kind, target, stamped).holds``, written out as one function (``_proof_code``)."""
    return _proven(kind, target, stamped)[1]


def cross_era_check(
    spec: MethodSpec[Any, Any], stamped: frozenset[str] = frozenset()
) -> ResultCheck:
    """``Route.check`` for a handler written for another revision than the one served: its
    result must be valid under ``spec``'s result type too. Proven per class where it can be,
    validated whole where not, and wherever the proof is not shown to hold, so a result that
    fails raises the full validation's own ``ValidationError``. ``stamped``: the keys the route
    may add to a result after its dump. A closure: it runs once per call."""
    target = spec.result_type
    task = spec.task_result_type
    # The proofs for the plain result type, by the result's class: one lookup per call.
    plain: dict[Any, Callable[[Any], bool]] = {}

    def check(kind: Any, data: Any, params: dict[str, Any] | None) -> None:
        if task is not None and params is not None and "task" in params:
            if type(data) is not dict or not proof_function(kind, task, stamped)(data):
                validator(task)(data)
            return
        holds = plain.get(kind)
        if holds is None:
            holds = remember(plain, kind, proof_function(kind, target, stamped), _MAX_PROOFS)
        if type(data) is not dict or not holds(data):
            validator(target)(data)

    return check
