"""Intermediate representation of one schema revision (stage 2 of the pipeline)."""

from .build import build_ir
from .model import (
    CapabilityFlag,
    Definition,
    Direction,
    Era,
    FixupRecord,
    JSONSchema,
    Method,
    Notification,
    ResultLink,
    RevisionIR,
)

__all__ = [
    "CapabilityFlag",
    "Definition",
    "Direction",
    "Era",
    "FixupRecord",
    "JSONSchema",
    "Method",
    "Notification",
    "ResultLink",
    "RevisionIR",
    "build_ir",
]
