"""Emit ``types.pyi`` and ``types.py``: pydantic v2 models for every definition, by
datamodel-code-generator, each class defined on first use at run time (``lazy``)."""

from __future__ import annotations

import warnings
from typing import Any

import datamodel_code_generator as dcg
from datamodel_code_generator.enums import DataModelType, InputFileType
from datamodel_code_generator.format import PythonVersion
from datamodel_code_generator.parser import LiteralType

from ..errors import CodegenError
from ..ir import RevisionIR
from .absent import absent_if_none_fields, mark_absent_if_none
from .aliases import plain_model_aliases
from .lazy import LazyModels, split_models
from .ordering import settle_definitions
from .overrides import mark_narrowed_overrides
from .schema_prep import SUPPORT, prepare_document

MODEL_BASE_CLASS = f"{SUPPORT}.MCPModel"

# One place for every datamodel-code-generator option we rely on; the benchmark reuses it so
# that "datamodel-codegen alone" is measured on the same work.
DCG_OPTIONS: dict[str, Any] = {
    "input_file_type": InputFileType.JsonSchema,
    "output_model_type": DataModelType.PydanticV2BaseModel,
    "target_python_version": PythonVersion.PY_311,
    "base_class": MODEL_BASE_CLASS,
    "use_annotated": True,
    "use_union_operator": True,
    "use_standard_collections": True,
    "field_constraints": True,
    "enum_field_as_literal": LiteralType.All,
    "use_one_literal_as_default": True,
    "use_type_alias": True,
    "use_double_quotes": True,
    "use_schema_description": True,
    "use_field_description": True,
    "disable_timestamp": True,
    "skip_root_model": True,
    "aliases": {"_meta": "meta", "$schema": "schema_"},
    "formatters": [],
}


def emit_models(ir: RevisionIR) -> LazyModels:
    """The unformatted sources of ``types.pyi`` and ``types.py`` for ``ir``."""
    document = prepare_document(ir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            source = dcg.generate(document, **DCG_OPTIONS)
        except Exception as exc:  # datamodel-code-generator has no common error base class
            raise CodegenError(f"revision {ir.revision}: model generation failed: {exc}") from exc
    if not isinstance(source, str):
        raise CodegenError(f"revision {ir.revision}: datamodel-code-generator returned no module")
    settled = plain_model_aliases(settle_definitions(_strip_dcg_banner(source)))
    settled = mark_narrowed_overrides(settled)
    marked, _ = mark_absent_if_none(settled, absent_if_none_fields(document["$defs"]))
    return split_models(marked, ir.revision)


def _strip_dcg_banner(source: str) -> str:
    """Drop datamodel-code-generator's own comment banner: our header replaces it."""
    lines = source.splitlines(keepends=True)
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    return "".join(lines)
