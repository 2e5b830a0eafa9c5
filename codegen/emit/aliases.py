"""Make an alias that names exactly one model the model itself, so that a user can build it.

datamodel-code-generator writes every schema alias as a ``TypeAliasType``; one that names a single
model (``EmptyResult``, the result of ``ping`` and of every request without a result of its own)
is then neither callable at run time nor to a type checker, so ``return types.EmptyResult()``
fails. Such an alias becomes a plain assignment, ``EmptyResult = Result``: the same class under a
second name, which type checkers read as an alias of the class and so as callable.

Not a subclass (``class EmptyResult(Result)``): the runtime validates a handler's answer against
the method table's result class, and a ``Result()`` returned where the table says ``EmptyResult``
would no longer be an instance of it; the same class keeps ``isinstance``, pickling and the JSON
schema as they were. Unions, scalars and other aliases stay ``TypeAliasType``.
"""

from __future__ import annotations

import ast

__all__ = ["plain_model_aliases"]


def plain_model_aliases(source: str) -> str:
    """``source`` (a ``types.py``) with each alias that names one of its classes a plain assignment."""
    tree = ast.parse(source)
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    lines = source.splitlines(keepends=True)
    for node in reversed(tree.body):
        target = _single_model_alias(node, classes)
        if target is None:
            continue
        first, last = node.lineno - 1, node.end_lineno or node.lineno
        lines[first:last] = [f"{target[0]} = {target[1]}\n"]
    return "".join(lines)


def _single_model_alias(node: ast.stmt, classes: set[str]) -> tuple[str, str] | None:
    """``(alias, class)`` when ``node`` is ``Alias = TypeAliasType("Alias", Class)``."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "TypeAliasType"
        and len(node.value.args) == 2
        and not node.value.keywords
    ):
        return None
    _, value = node.value.args
    if isinstance(value, ast.Name) and value.id in classes:
        return node.targets[0].id, value.id
    return None
