"""A proof written out as one Python function, built once per pair of classes.

The proof objects (``_proofs``) say what a dumped result must show; walking them costs a call
and a few attribute reads per node, about 11k instructions for a 2026-07-28 echo result, most
of the 17k the full validation cost. Written out as straight-line code (one ``if`` per member
looked at, a ``for`` per list, the target's own validators called by name where a part must be
validated), the same walk is a few k. The source holds only ``repr`` of the schemas' keys and
tags; everything else is passed in by name. Deeper than ``_MAX_DEPTH`` blocks (Python nests
at most 20), a node calls its proof object's ``holds`` instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ._proofs import (
    PROVEN,
    UNPROVEN,
    DictProof,
    ListProof,
    ModelProof,
    NullableProof,
    Proof,
    TaggedProof,
    Validate,
)

__all__ = ["compiled"]

_MAX_DEPTH: Final = 12
_FEW: Final = 4
_MISSING: Final = object()


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {"MISSING": _MISSING}
        self.count = 0

    def name(self, prefix: str, value: Any = None) -> str:
        self.count += 1
        name = f"{prefix}{self.count}"
        if value is not None:
            self.names[name] = value
        return name

    def line(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def check(self, proof: Proof, var: str, depth: int, is_dict: bool = False) -> None:
        """Lines that ``return False`` unless ``var`` holds ``proof``, else fall through
        (``is_dict``: ``var`` is known to be a dict already)."""
        if proof is PROVEN:
            return
        if proof is UNPROVEN:
            self.line(depth, "return False")
        elif depth >= _MAX_DEPTH:
            self.line(depth, f"if not {self.name('h', proof.holds)}({var}):")
            self.line(depth + 1, "return False")
        elif isinstance(proof, Validate):
            self._validate(proof, var, depth)
        elif isinstance(proof, NullableProof):
            self._nullable(proof, var, depth)
        elif isinstance(proof, ModelProof):
            self._model(proof, var, depth, is_dict)
        elif isinstance(proof, ListProof):
            self._items(proof, var, depth)
        elif isinstance(proof, DictProof):
            self._values(proof, var, depth)
        elif isinstance(proof, TaggedProof):
            self._tagged(proof, var, depth)
        else:
            self.line(depth, f"if not {self.name('h', proof.holds)}({var}):")
            self.line(depth + 1, "return False")

    def _validate(self, proof: Validate, var: str, depth: int) -> None:
        holds = self.name("h", proof.holds)
        if proof.strings is not None:
            strings = self.name("s", proof.strings)
            self.line(
                depth,
                f"if not (type({var}) is str and {var} in {strings}) and not {holds}({var}):",
            )
        else:
            self.line(depth, f"if not {holds}({var}):")
        self.line(depth + 1, "return False")

    def _nullable(self, proof: NullableProof, var: str, depth: int) -> None:
        self.line(depth, f"if {var} is None:")
        self.line(depth + 1, "pass" if proof.none else "return False")
        if proof.inner is not PROVEN:
            self.line(depth, "else:")
            self.check(proof.inner, var, depth + 1)

    def _model(self, proof: ModelProof, var: str, depth: int, is_dict: bool) -> None:
        if not is_dict:
            self.line(depth, f"if type({var}) is not dict:")
            self.line(depth + 1, "return False")
        optional: list[tuple[str, Proof]] = []
        for key, required, part in proof.watched:
            if not required:
                optional.append((key, part))
            elif part is PROVEN:
                self.line(depth, f"if {key!r} not in {var}:")
                self.line(depth + 1, "return False")
            else:
                item = self.name("x")
                self.line(depth, f"{item} = {var}.get({key!r}, MISSING)")
                self.line(depth, f"if {item} is MISSING:")
                self.line(depth + 1, "return False")
                self.check(part, item, depth)
        if not optional:
            return
        # Optional members are seldom there: one look for all of them first (a few ``in``
        # cost less than ``isdisjoint``, which iterates the dict).
        if len(optional) <= _FEW:
            self.line(depth, "if " + " or ".join(f"{key!r} in {var}" for key, _ in optional) + ":")
        else:
            keys = self.name("k", frozenset(key for key, _ in optional))
            self.line(depth, f"if not {keys}.isdisjoint({var}):")
        for key, part in optional:
            item = self.name("x")
            self.line(depth + 1, f"{item} = {var}.get({key!r}, MISSING)")
            self.line(depth + 1, f"if {item} is not MISSING:")
            self.check(part, item, depth + 2)
            self.line(depth + 2, "pass")

    def _items(self, proof: ListProof, var: str, depth: int) -> None:
        self.line(depth, f"if type({var}) is not list:")
        self.line(depth + 1, "return False")
        if proof.item is PROVEN:
            return
        item = self.name("x")
        self.line(depth, f"for {item} in {var}:")
        self.check(proof.item, item, depth + 1)
        self.line(depth + 1, "pass")

    def _values(self, proof: DictProof, var: str, depth: int) -> None:
        self.line(depth, f"if type({var}) is not dict:")
        self.line(depth + 1, "return False")
        key, item = self.name("k"), self.name("x")
        self.line(depth, f"for {key}, {item} in {var}.items():")
        self.line(depth + 1, f"if type({key}) is not str:")
        self.line(depth + 2, "return False")
        self.check(proof.item, item, depth + 1)

    def _tagged(self, proof: TaggedProof, var: str, depth: int) -> None:
        self.line(depth, f"if type({var}) is not dict:")
        self.line(depth + 1, "return False")
        tag = self.name("t")
        self.line(depth, f"{tag} = {var}.get({proof.tag!r})")
        self.line(depth, f"if type({tag}) is not str:")
        self.line(depth + 1, "return False")
        keyword = "if"
        for value, member in proof.proofs.items():
            self.line(depth, f"{keyword} {tag} == {value!r}:")
            self.check(member, var, depth + 1, is_dict=True)
            self.line(depth + 1, "pass")
            keyword = "elif"
        self.line(depth, "else:")
        self.line(depth + 1, "return False")


def compiled(proof: Proof) -> Callable[[Any], bool]:
    """``proof.holds`` as one function (``proof.holds`` itself if it cannot be written)."""
    writer = _Writer()
    writer.line(0, "def holds(v):")
    writer.check(proof, "v", 1)
    writer.line(1, "return True")
    namespace = dict(writer.names)
    try:
        # The source is ours: reprs of schema keys and tags, and names bound in ``namespace``.
        exec(compile("\n".join(writer.lines), "<cross-era proof>", "exec"), namespace)
    except Exception:  # too deep or too large to compile: the proof objects walk it
        return proof.holds
    function: Callable[[Any], bool] = namespace["holds"]
    return function
