"""``mcpbind diff``: what a new protocol revision changes, and what of it breaks whom.

Compares two ``RevisionIR``s (not JSON text): the method and notification tables, the capability
flags, and every definition, with renames detected by shape. Each change carries a rule ID, a
path, the message flow it is on, a severity for protocol peers and a flag for code importing the
generated bindings. The rules and the severity policy are documented in ``rules``.

``diff_surfaces`` compares two server-surface snapshots (``mcpbind inspect --json``, checked by
``snapshot`` against ``surface.schema.json``) with the same rules, judged for the server's
clients (``surface``).
"""

from .engine import diff_revisions
from .model import Change, Subject
from .rules import Rule, Severity
from .surface import diff_surfaces
from .taxonomy import RULE_DOCS

__all__ = ["RULE_DOCS", "Change", "Rule", "Severity", "Subject", "diff_revisions", "diff_surfaces"]
