"""Proofs: what a value dumped from one class must still show to be valid under a type.

``Prover`` walks the two core schemas (``_schemas``) together: a part the source validated
alike and whose dump validates again is ``PROVEN`` and never looked at; a model, list, dict,
nullable or tagged union shared in shape is followed; any other part is checked with the
target's own validator for it (``Validate``), and a part that cannot be checked alone makes the
whole pair ``UNPROVEN`` (validated in full, as before).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeGuard

from mcpbind.runtime.core.bindings import adapter, validator
from pydantic import BaseModel
from pydantic_core import SchemaValidator

from ._schemas import (
    CONFIG,
    Defs,
    Schema,
    checkable,
    field_round_trips,
    is_mapping,
    keys_of,
    round_trips,
    same,
    understood,
)

__all__ = [
    "PROVEN",
    "UNPROVEN",
    "DictProof",
    "ListProof",
    "ModelProof",
    "NullableProof",
    "Proof",
    "Prover",
    "TaggedProof",
    "Validate",
    "prove_pair",
]

_MISSING: Final = object()


def _is_list(value: Any) -> TypeGuard[list[Any]]:
    return type(value) is list


class Proof:
    """What a value dumped from one schema must still show to be valid under another.

    ``quick``: for a model whose fields to check are all optional, their keys: a dict holding
    none of them holds (a set's ``isdisjoint``, without a call), else None.
    """

    __slots__ = ()
    quick: frozenset[str] | None = None

    def holds(self, value: Any) -> bool:
        """True only if the target's validation would accept ``value`` (False: not shown)."""
        raise NotImplementedError


class _Proven(Proof):
    __slots__ = ()
    quick = frozenset[str]()

    def holds(self, value: Any) -> bool:
        return True


class _Unproven(Proof):
    __slots__ = ()

    def holds(self, value: Any) -> bool:
        return False


PROVEN: Final[Proof] = _Proven()
UNPROVEN: Final[Proof] = _Unproven()


class Validate(Proof):
    """The target's own validator for this part (a literal's strings accepted without it)."""

    __slots__ = ("strings", "validate")

    def __init__(self, validate: Callable[[Any], Any], strings: frozenset[str] | None) -> None:
        self.validate = validate
        self.strings = strings

    def holds(self, value: Any) -> bool:
        strings = self.strings
        if strings is not None and type(value) is str and value in strings:
            return True
        try:
            self.validate(value)
        except Exception:  # any doubt: the full validation decides, and raises its own error
            return False
        return True


class ModelProof(Proof):
    """A model: each field the source does not prove, by its key (``required``: refused when
    absent), as ``(key, required, proof)``; the fields only needed present, and the optional
    ones (seldom there: looked for all at once) kept apart for speed."""

    __slots__ = ("literals", "needed", "optional", "optional_keys", "present", "quick", "watched")

    def __init__(self, watched: tuple[tuple[str, bool, Proof], ...]) -> None:
        self.watched = watched
        required = [(k, p) for k, needed, p in watched if needed]
        self.present = tuple(k for k, p in required if p is PROVEN)
        # A required literal (``resultType``): its strings looked up here, without a call.
        self.literals = tuple(
            (k, p.strings, p.holds)
            for k, p in required
            if isinstance(p, Validate) and p.strings is not None
        )
        literal_keys = {k for k, _, _ in self.literals}
        self.needed = tuple(
            (k, p.holds) for k, p in required if p is not PROVEN and k not in literal_keys
        )
        self.optional = tuple((k, p.holds) for k, needed, p in watched if not needed)
        self.optional_keys = frozenset(k for k, _ in self.optional)
        self.quick = None if required else self.optional_keys

    def holds(self, value: Any) -> bool:
        if not is_mapping(value):
            return False
        for key in self.present:
            if key not in value:
                return False
        for key, strings, holds in self.literals:
            item = value.get(key, _MISSING)
            if type(item) is str and item in strings:
                continue
            if item is _MISSING or not holds(item):
                return False
        for key, holds in self.needed:
            item = value.get(key, _MISSING)
            if item is _MISSING or not holds(item):
                return False
        if self.optional_keys.isdisjoint(value):
            return True
        for key, holds in self.optional:
            item = value.get(key, _MISSING)
            if item is not _MISSING and not holds(item):
                return False
        return True


class ListProof(Proof):
    """Each item; items of a union decided by a tag are looked at here, without a call for an
    item whose member needs none of its optional fields checked and has none of them."""

    __slots__ = ("item", "members", "tag")

    def __init__(self, item: Proof) -> None:
        self.item = item
        self.tag = item.tag if isinstance(item, TaggedProof) else None
        self.members = item.members if isinstance(item, TaggedProof) else {}

    def holds(self, value: Any) -> bool:
        if not _is_list(value):
            return False
        tag = self.tag
        if tag is None:
            holds = self.item.holds
            return all(holds(item) for item in value)
        members = self.members
        for item in value:
            if not is_mapping(item):
                return False
            name = item.get(tag)
            if type(name) is not str:
                return False
            member = members.get(name)
            if member is None:
                return False
            quick, holds = member
            if (quick is None or not quick.isdisjoint(item)) and not holds(item):
                return False
        return True


class DictProof(Proof):
    __slots__ = ("item",)

    def __init__(self, item: Proof) -> None:
        self.item = item

    def holds(self, value: Any) -> bool:
        if not is_mapping(value):
            return False
        holds = self.item.holds
        return all(not (type(key) is not str or not holds(item)) for key, item in value.items())


class NullableProof(Proof):
    __slots__ = ("inner", "none")

    def __init__(self, inner: Proof, none: bool) -> None:
        self.inner = inner
        self.none = none

    def holds(self, value: Any) -> bool:
        return self.none if value is None else self.inner.holds(value)


class TaggedProof(Proof):
    """A union decided by a tag: the proof of the member the value's tag names."""

    __slots__ = ("members", "proofs", "tag")

    def __init__(self, tag: str, members: dict[str, Proof]) -> None:
        self.tag = tag
        self.proofs = members
        self.members = {value: (proof.quick, proof.holds) for value, proof in members.items()}

    def holds(self, value: Any) -> bool:
        if not is_mapping(value):
            return False
        tag = value.get(self.tag)
        if type(tag) is not str:
            return False
        member = self.members.get(tag)
        if member is None:
            return False
        quick, holds = member
        return (quick is not None and quick.isdisjoint(value)) or holds(value)


def _core_schema(tp: Any) -> Schema | None:
    found: Any = tp  # narrowed here; ``tp`` stays what the adapter takes
    if isinstance(found, type) and issubclass(found, BaseModel):
        validator(tp)  # builds a deferred model's schema
        schema: Any = tp.__pydantic_core_schema__
    else:
        schema = adapter(tp).core_schema
    return schema if is_mapping(schema) else None


class Prover:
    """Builds the proof of one (source, target) pair of core schemas, node by node."""

    def __init__(self, source: Schema, target: Schema, stamped: frozenset[str]) -> None:
        self.sdefs = Defs(source)
        self.tdefs = Defs(target)
        self.stamped = stamped
        self.definitions = list(self.tdefs.table.values())
        self.building: set[tuple[int, int]] = set()
        self.validators: dict[tuple[int, int], Proof] = {}

    def node(self, s: Any, t: Any, config: Mapping[str, Any], top: bool = False) -> Proof:
        """The proof that a dump of a valid ``s`` value validates under ``t``."""
        sn, tn = self.sdefs.resolve(s), self.tdefs.resolve(t)
        if sn is None or tn is None:
            return UNPROVEN
        if tn["type"] == "any" and understood(tn):
            return PROVEN  # takes anything
        # Not at the top, where the runtime may have stamped keys the source did not write.
        if (
            not top
            and round_trips(sn, self.sdefs, set())
            and same(sn, tn, self.sdefs, self.tdefs, set())
        ):
            return PROVEN
        pair = (id(sn), id(tn))
        if pair in self.building:  # a recursive type met again: its target's validator
            return self.fallback(tn, config)
        self.building.add(pair)
        try:
            return self.structural(sn, tn, config, top) or self.fallback(tn, config)
        finally:
            self.building.discard(pair)

    def structural(
        self, sn: Schema, tn: Schema, config: Mapping[str, Any], top: bool
    ) -> Proof | None:
        """A proof that follows the two schemas' common shape, or None where they part."""
        if not (understood(sn) and understood(tn)):
            return None
        skind, tkind = sn["type"], tn["type"]
        if skind == "default" or tkind == "default":
            # A value that is there is validated by what the default wraps.
            return self.node(
                sn["schema"] if skind == "default" else sn,
                tn["schema"] if tkind == "default" else tn,
                config,
            )
        if skind == "nullable" or tkind == "nullable":
            inner = self.node(
                sn["schema"] if skind == "nullable" else sn,
                tn["schema"] if tkind == "nullable" else tn,
                config,
            )
            if inner is PROVEN and tkind == "nullable":
                return PROVEN
            return NullableProof(inner, tkind == "nullable")
        if skind == "model" and tkind == "tagged-union":
            return self.tagged_model(sn, tn, config, top)
        if skind != tkind:
            return None
        if skind == "list":
            if sn.get("min_length") != tn.get("min_length") or sn.get("max_length") != tn.get(
                "max_length"
            ):
                return None
            return ListProof(self.node(sn["items_schema"], tn["items_schema"], config))
        if skind == "dict":
            if not same(sn["keys_schema"], tn["keys_schema"], self.sdefs, self.tdefs, set()):
                return None
            return DictProof(self.node(sn["values_schema"], tn["values_schema"], config))
        if skind == "tagged-union":
            return self.tagged(sn, tn, config)
        if skind == "model":
            return self.model(sn, tn, top)
        return None

    def tagged(self, sn: Schema, tn: Schema, config: Mapping[str, Any]) -> Proof | None:
        tag = tn["discriminator"]
        if (
            not isinstance(tag, str)
            or sn["discriminator"] != tag
            or tn.get("strict")
            or tn.get("custom_error_type")
        ):
            return None
        members: dict[str, Proof] = {}
        for value, choice in sn["choices"].items():
            theirs = tn["choices"].get(value)
            if not isinstance(value, str) or theirs is None:
                return None
            members[value] = self.node(choice, theirs, config)
        return TaggedProof(tag, members)

    def tagged_model(
        self, sn: Schema, tn: Schema, config: Mapping[str, Any], top: bool
    ) -> Proof | None:
        """One model's dump under a union decided by a tag: each member's proof, by its tag
        (the dump's own tag picks one; a stamped tag at the top as well)."""
        tag = tn["discriminator"]
        if not isinstance(tag, str) or tn.get("strict") or tn.get("custom_error_type"):
            return None
        members: dict[str, Proof] = {}
        for value, choice in tn["choices"].items():
            if not isinstance(value, str):
                return None
            members[value] = self.node(sn, choice, config, top)
        return TaggedProof(tag, members)

    def model(self, sn: Schema, tn: Schema, top: bool) -> Proof | None:
        """A model's fields that the source's dump does not prove, each checked per call.

        A target field is proven when the source writes a field under the key it reads, with
        the same validation schema, whose dump validates again; never one the runtime may stamp
        at the top (its value need not come from the source's field)."""
        sdefs, tdefs = self.sdefs, self.tdefs
        tconfig, sconfig = tn.get("config", {}), sn.get("config", {})
        tinner, sinner = tdefs.resolve(tn["schema"]), sdefs.resolve(sn["schema"])
        if (
            tn.get("custom_init")
            or tn.get("root_model")
            or sn.get("custom_init")
            or sn.get("root_model")
            or not tconfig.keys() <= CONFIG
            or not sconfig.keys() <= CONFIG
            or tconfig.get("extra_fields_behavior", "ignore") not in ("allow", "ignore")
            or tinner is None
            or sinner is None
            or tinner.get("type") != "model-fields"
            or sinner.get("type") != "model-fields"
            or not understood(tinner)
            or not understood(sinner)
            or tinner.get("computed_fields")
            or sinner.get("computed_fields")
        ):
            return None
        written: dict[str, tuple[str, Schema]] = {}
        for name, field in sinner["fields"].items():
            if not understood(field):
                return None
            written[keys_of(sconfig, name, field)[0]] = (name, field)
        watched: list[tuple[str, bool, Proof]] = []
        for name, field in tinner["fields"].items():
            if not understood(field):
                return None
            _, read = keys_of(tconfig, name, field)
            if len(read) != 1:
                return None
            (key,) = read
            schema = tdefs.resolve(field["schema"])
            if schema is None:
                return None
            required = schema["type"] != "default"
            theirs = written.get(key)
            if (
                theirs is None
                or (top and key in self.stamped)
                or not field_round_trips(sconfig, theirs[0], theirs[1], sdefs, set())
            ):
                proof = self.fallback(schema, tconfig)
            else:
                proof = self.node(theirs[1]["schema"], field["schema"], tconfig)
            if proof is UNPROVEN:
                return None
            # Proven and present whenever the target needs it: nothing to look at.
            if proof is not PROVEN or (required and _optional(theirs, sdefs)):
                watched.append((key, required, proof))
        return ModelProof(tuple(watched))

    def fallback(self, tn: Schema, config: Mapping[str, Any]) -> Proof:
        """The target's own validator for node ``tn``, if it validates the same alone."""
        found = self.validators.get((id(tn), id(config)))
        if found is not None:
            return found
        proof: Proof = UNPROVEN
        resolved = self.tdefs.resolve(tn)
        if resolved is not None and checkable(tn, self.tdefs, set()):
            core: Any = (
                {"type": "definitions", "schema": tn, "definitions": self.definitions}
                if self.definitions
                else tn
            )
            try:
                check = SchemaValidator(core, dict(config))  # type: ignore[arg-type]
            except Exception:
                check = None
            if check is not None:
                inner = (
                    self.tdefs.resolve(resolved["schema"])
                    if resolved["type"] == "default"
                    else resolved
                )
                strings = (
                    frozenset(v for v in inner["expected"] if type(v) is str)
                    if inner is not None and inner["type"] == "literal"
                    else None
                )
                proof = Validate(check.validate_python, strings)
        self.validators[id(tn), id(config)] = proof
        return proof


def _optional(theirs: tuple[str, Schema] | None, defs: Defs) -> bool:
    """Whether the source's field may be left out of its dump (unset, or excluded)."""
    if theirs is None:
        return True
    schema = defs.resolve(theirs[1]["schema"])
    return schema is None or schema["type"] == "default"


def prove_pair(kind: Any, target: Any, stamped: frozenset[str]) -> Proof:
    if not (isinstance(kind, type) and issubclass(kind, BaseModel)):
        return UNPROVEN
    source, top = _core_schema(kind), _core_schema(target)
    if source is None or top is None:
        return UNPROVEN
    prover = Prover(source, top, stamped)
    if (prover.sdefs.resolve(source) or {}).get("type") != "model":
        return UNPROVEN
    return prover.node(source, top, {}, top=True)
