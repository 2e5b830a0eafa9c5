"""``--format yaml``: the JSON document (``report.schema.json``) as YAML, for tools and people
that read YAML. PyYAML comes with the ``codegen`` extra; without it the format is a one-line
error, and every other format still works."""

from __future__ import annotations

from ..errors import CodegenError
from .render import report_document
from .report import Report

__all__ = ["render_yaml"]


def render_yaml(report: Report, fail_on: str) -> str:
    """``report_document`` in block style, keys in the JSON order."""
    try:
        import yaml  # the codegen extra's; a plain install lacks it (see the module docstring)
    except ImportError:
        raise CodegenError(
            "--format yaml needs PyYAML: pip install 'mcpbind[codegen]' (or pyyaml)"
        ) from None
    # libyaml's dumper when PyYAML was built with it: the pure-Python one takes longer than the
    # whole diff on the largest pair.
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    # types-PyYAML types ``width`` with a name it leaves undefined, so ``dump`` is partly unknown.
    text: str = yaml.dump(  # pyright: ignore[reportUnknownMemberType]
        report_document(report, fail_on),
        Dumper=dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
    )
    return text
