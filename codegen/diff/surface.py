"""Compare two server-surface snapshots: what a server offers, judged for its clients.

A snapshot (``snapshot.py``) lists a server's tools, resources, resource templates, prompts and
capabilities. The OLD one is what clients were written against, the NEW one the server they now
meet; the server itself is new code, so only clients are judged. A client *sends* tool and prompt
arguments and resource URIs (the server receives them: anything the server now rejects, or
silently drops, hits the client) and *reads* listings, results and capabilities (anything it may
now see that it could not before, or no longer sees, hits the client).

Argument and output schemas are compared by ``compare.DefinitionComparer``, the same walk as the
protocol diff; each difference keeps its rule and takes the client's side of its impact: the
sender's for an input schema, the receiver's for an output schema. Two policies differ from the
protocol diff, both because a client, not a protocol peer, is on the other end:

- an argument removed from an input schema that accepts unknown properties is
  potentially-breaking, not compatible: the server ignores it, so the client's intent is lost;
- in an output schema, whatever may surprise a reader (a field removed or made optional, a type
  widened) is breaking: clients commonly validate ``structuredContent`` against the schema they
  were written for.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..ir import Direction
from ..ir.refs import definitions_of
from ..jsonvalues import is_object
from . import rules
from .compare import DefinitionComparer, Delta
from .model import SUBJECT_ORDER, Change, Finding, Subject
from .rules import NO_IMPACT, Impact, Rule, Severity

_C, _P, _B = Severity.COMPATIBLE, Severity.POTENTIALLY_BREAKING, Severity.BREAKING
#: What the client sends (arguments, URIs) and what it reads (listings, results, capabilities).
SENT = frozenset({Direction.CLIENT_TO_SERVER})
READ = frozenset({Direction.SERVER_TO_CLIENT})
_PROSE = ("title", "description")
#: Each tool hint, its default when absent (MCP's ToolAnnotations), the value that is the less
#: safe one for a host deciding whether to ask the user, and what turning to it means.
HINTS = (
    ("readOnlyHint", False, False, "the tool may now modify its environment"),
    ("destructiveHint", True, True, "the tool may now perform destructive updates"),
    ("idempotentHint", False, False, "repeated calls may now have additional effects"),
    ("openWorldHint", True, True, "the tool may now reach beyond a closed domain"),
)
_TOP_LEVEL = {
    Rule.PROPERTY_ADDED: Rule.TOOL_ARGUMENT_ADDED,
    Rule.PROPERTY_REMOVED: Rule.TOOL_ARGUMENT_REMOVED,
    Rule.PROPERTY_REQUIRED_ADDED: Rule.TOOL_ARGUMENT_REQUIRED,
    Rule.PROPERTY_REQUIRED_REMOVED: Rule.TOOL_ARGUMENT_OPTIONAL,
}
_FRAME = frozenset({"$defs", "definitions", "$schema", "$id"})
_EXPRESSION = re.compile(r"\{([^}]*)\}")


def template_variables(template: str) -> frozenset[str]:
    """The variable names of an RFC 6570 URI template (``{+path}``, ``{?q,limit*}``...)."""
    names: set[str] = set()
    for expression in _EXPRESSION.findall(template):
        for spec in expression.lstrip("+#./;?&=,!@|").split(","):
            name = spec.split(":", 1)[0].rstrip("*").strip()
            if name:
                names.add(name)
    return frozenset(names)


def diff_surfaces(
    old: Mapping[str, Any], new: Mapping[str, Any], include_descriptions: bool = False
) -> list[Change]:
    """Every change from snapshot ``old`` to ``new``, judged for clients and ordered by subject,
    name, worst first."""
    findings = _Surface(include_descriptions).compare(old, new)
    changes = [
        judge(f) for f in findings if include_descriptions or f.rule is not Rule.DESCRIPTION_CHANGED
    ]
    return sorted(
        changes,
        key=lambda c: (SUBJECT_ORDER[c.subject], c.name, -c.severity.rank, c.path, c.rule.value),
    )


def judge(finding: Finding) -> Change:
    """A surface finding as a change: only clients are at risk, the worse side decides."""
    severity = finding.impact.severity
    consequence = {_C: "", _P: " (may break clients)", _B: " (breaks clients)"}[severity]
    flows = finding.flows or frozenset()
    return Change(
        rule=finding.rule,
        severity=severity,
        bindings=False,
        path=finding.path,
        direction=next(iter(flows)).value if len(flows) == 1 else None,
        old=finding.old,
        new=finding.new,
        message=finding.what + consequence,
        affects=("client",) if severity is not _C else (),
        subject=finding.subject,
        name=finding.name,
    )


def _keyed(entries: Iterable[Mapping[str, Any]], key: str) -> dict[str, Mapping[str, Any]]:
    return {entry[key]: entry for entry in entries}


@dataclass
class _Surface:
    """The findings of one surface diff."""

    descriptions: bool

    def compare(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Finding]:
        out = self._capabilities(old["capabilities"], new["capabilities"])
        if old.get("instructions") != new.get("instructions"):
            out.append(self._prose("server", "instructions", Subject.CAPABILITY, old, new))
        out += self._tools(_keyed(old["tools"], "name"), _keyed(new["tools"], "name"))
        out += self._resources(_keyed(old["resources"], "uri"), _keyed(new["resources"], "uri"))
        out += self._templates(old["resourceTemplates"], new["resourceTemplates"])
        out += self._prompts(_keyed(old["prompts"], "name"), _keyed(new["prompts"], "name"))
        return out

    # -- helpers -----------------------------------------------------------------------------

    @staticmethod
    def _finding(
        rule: Rule,
        subject: Subject,
        name: str,
        what: str,
        flows: frozenset[Direction],
        path: str | None = None,
        old: Any = None,
        new: Any = None,
        impact: Impact | None = None,
    ) -> Finding:
        return Finding(
            rule,
            subject,
            name,
            path or name,
            what,
            impact or rules.impact(rule),
            flows,
            old,
            new,
        )

    def _prose(
        self,
        name: str,
        key: str,
        subject: Subject,
        old: Mapping[str, Any],
        new: Mapping[str, Any],
        at: str | None = None,
    ) -> Finding:
        """A change of prose (hidden unless ``--include-descriptions``) at ``at.key``."""
        path = f"{at or name}.{key}"
        what = f"{path.removeprefix(name).lstrip('.')} changed"
        rule = Rule.DESCRIPTION_CHANGED
        return self._finding(rule, subject, name, what, READ, path, old.get(key), new.get(key))

    def _described(
        self,
        name: str,
        subject: Subject,
        old: Mapping[str, Any],
        new: Mapping[str, Any],
        at: str | None = None,
    ) -> list[Finding]:
        return [
            self._prose(name, key, subject, old, new, at)
            for key in _PROSE
            if old.get(key) != new.get(key)
        ]

    # -- capabilities --------------------------------------------------------------------------

    def _capabilities(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Finding]:
        before, after = _flags(old), _flags(new)
        out: list[Finding] = []
        for rule, changed, verb in (
            (Rule.SERVER_CAPABILITY_REMOVED, before - after, "no longer advertised"),
            (Rule.SERVER_CAPABILITY_ADDED, after - before, "advertised"),
        ):
            for flag in sorted(changed):
                if flag.rpartition(".")[0] in changed:
                    continue  # folded into its parent
                gone = rule is Rule.SERVER_CAPABILITY_REMOVED
                what = f"capability '{flag}' {verb}"
                out.append(
                    self._finding(
                        rule,
                        Subject.CAPABILITY,
                        "capabilities",
                        what,
                        READ,
                        f"capabilities.{flag}",
                        flag if gone else None,
                        None if gone else flag,
                    )
                )
        return out

    # -- tools -------------------------------------------------------------------------------

    def _listed(
        self,
        olds: Mapping[str, Mapping[str, Any]],
        news: Mapping[str, Mapping[str, Any]],
        kind: str,
        subject: Subject,
        rules: tuple[Rule, Rule],
        label: Callable[[str], str],
        fails: str,
        compare: Callable[[str, Mapping[str, Any], Mapping[str, Any]], list[Finding]],
    ) -> list[Finding]:
        """One list of the surface (tools, resources, prompts) by key: each entry removed
        (``rules[0]``: ``fails`` says what a client sees) or added (``rules[1]``), and those in
        both ``compare``d."""
        removed, added = rules
        out: list[Finding] = []
        for key in sorted(olds.keys() | news.keys()):
            name = f"{kind}/{key}"
            before, after = olds.get(key), news.get(key)
            if after is None:
                what = f"{label(key)} removed: {fails}"
                out.append(self._finding(removed, subject, name, what, SENT, old=key))
            elif before is None:
                what = f"{label(key)} added"
                out.append(self._finding(added, subject, name, what, SENT, new=key))
            else:
                out += compare(name, before, after)
        return out

    def _tools(
        self, olds: Mapping[str, Mapping[str, Any]], news: Mapping[str, Mapping[str, Any]]
    ) -> list[Finding]:
        def compare(
            name: str, before: Mapping[str, Any], after: Mapping[str, Any]
        ) -> list[Finding]:
            return [
                *self._described(name, Subject.TOOL, before, after),
                *self._inputs(name, before["inputSchema"], after["inputSchema"]),
                *self._outputs(name, before.get("outputSchema"), after.get("outputSchema")),
                *self._annotations(
                    name, before.get("annotations") or {}, after.get("annotations") or {}
                ),
            ]

        rules = (Rule.TOOL_REMOVED, Rule.TOOL_ADDED)
        return self._listed(
            olds,
            news,
            "tools",
            Subject.TOOL,
            rules,
            "tool '{}'".format,
            "calling it fails",
            compare,
        )

    def _deltas(self, old: Mapping[str, Any], new: Mapping[str, Any], path: str) -> list[Delta]:
        comparer = DefinitionComparer(
            definitions_of(dict(old)), definitions_of(dict(new)), {}, self.descriptions
        )
        deltas = comparer.schemas(_body(old), _body(new), path)
        # A reference to the same name compares as equal: what changed inside is found here.
        for name in sorted(comparer.old_defs.keys() & comparer.new_defs.keys()):
            deltas += [
                replace(d, path=f"{path}.$defs.{d.path}") for d in comparer.definition(name, name)
            ]
        return deltas

    def _inputs(self, name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Finding]:
        base = f"{name}.inputSchema"
        old_args: Mapping[str, Any] = old.get("properties") or {}
        new_args: Mapping[str, Any] = new.get("properties") or {}
        arguments = old_args.keys() | new_args.keys()
        out: list[Finding] = []
        for delta in self._deltas(old, new, base):
            sender = delta.impact.sender
            if delta.rule is Rule.PROPERTY_REMOVED and sender is _C:
                sender = _P  # ignored by the server: what the client asked for is dropped
            rule, what = delta.rule, delta.what
            argument = delta.path.removeprefix(f"{base}.")
            if delta.path != base and argument in arguments and rule in _TOP_LEVEL:
                rule = _TOP_LEVEL[rule]
                what = what.replace("property", "argument", 1)
            flows = READ if rule is Rule.DESCRIPTION_CHANGED else SENT
            impact = Impact(sender, _C, False)
            out.append(
                Finding(rule, Subject.TOOL, name, delta.path, what, impact, flows, *_values(delta))
            )
        return out

    def _outputs(
        self, name: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
    ) -> list[Finding]:
        base = f"{name}.outputSchema"
        if old is None and new is None:
            return []
        if old is None:
            what = "output schema added: the tool returns structured content"
            return [self._finding(Rule.OUTPUT_SCHEMA_ADDED, Subject.TOOL, name, what, READ, base)]
        if new is None:
            what = "output schema removed: the tool may no longer return structured content"
            return [self._finding(Rule.OUTPUT_SCHEMA_REMOVED, Subject.TOOL, name, what, READ, base)]
        out: list[Finding] = []
        for delta in self._deltas(old, new, base):
            reader = _B if delta.impact.receiver is not _C else _C
            impact = Impact(_C, reader, False)
            out.append(
                Finding(
                    delta.rule,
                    Subject.TOOL,
                    name,
                    delta.path,
                    delta.what,
                    impact,
                    READ,
                    *_values(delta),
                )
            )
        return out

    def _annotations(
        self, name: str, old: Mapping[str, Any], new: Mapping[str, Any]
    ) -> list[Finding]:
        out: list[Finding] = []
        if old.get("title") != new.get("title"):
            out.append(self._prose(name, "title", Subject.TOOL, old, new, f"{name}.annotations"))
        read_only = bool(new.get("readOnlyHint", False))
        for hint, default, unsafe, meaning in HINTS:
            was, now = old.get(hint, default), new.get(hint, default)
            if was == now:
                continue
            moot = read_only and hint in ("destructiveHint", "idempotentHint")
            worse = now == unsafe and not moot
            what = f"annotation {hint} {_hint(old, hint, default)} -> {_hint(new, hint, default)}"
            what += f": {meaning}" if worse else ""
            out.append(
                self._finding(
                    Rule.TOOL_ANNOTATION_CHANGED,
                    Subject.TOOL,
                    name,
                    what,
                    READ,
                    f"{name}.annotations.{hint}",
                    was,
                    now,
                    Impact(_C, _B, False) if worse else NO_IMPACT,
                )
            )
        return out

    # -- resources and templates -------------------------------------------------------------

    def _resources(
        self, olds: Mapping[str, Mapping[str, Any]], news: Mapping[str, Mapping[str, Any]]
    ) -> list[Finding]:
        def compare(
            name: str, before: Mapping[str, Any], after: Mapping[str, Any]
        ) -> list[Finding]:
            return [
                *self._described(name, Subject.RESOURCE, before, after),
                *self._mime(name, Subject.RESOURCE, before, after),
            ]

        rules = (Rule.RESOURCE_REMOVED, Rule.RESOURCE_ADDED)
        label = "resource {}".format
        return self._listed(
            olds, news, "resources", Subject.RESOURCE, rules, label, "reading it fails", compare
        )

    def _mime(
        self, name: str, subject: Subject, old: Mapping[str, Any], new: Mapping[str, Any]
    ) -> list[Finding]:
        was, now = old.get("mimeType"), new.get("mimeType")
        if was == now:
            return []
        what = f"MIME type {now or 'unset'} (was {was or 'unset'})"
        rule = Rule.RESOURCE_MIME_TYPE_CHANGED
        return [self._finding(rule, subject, name, what, READ, f"{name}.mimeType", was, now)]

    def _templates(
        self, olds: list[Mapping[str, Any]], news: list[Mapping[str, Any]]
    ) -> list[Finding]:
        """Paired by URI template, then what is left by name (a template whose pattern changed)."""
        by_uri = _keyed(news, "uriTemplate")
        pairs = [(o, by_uri[o["uriTemplate"]]) for o in olds if o["uriTemplate"] in by_uri]
        paired = {o["uriTemplate"] for o, _ in pairs}
        left = [o for o in olds if o["uriTemplate"] not in paired]
        right = [n for n in news if n["uriTemplate"] not in paired]
        for entry in list(left):
            same = [n for n in right if n["name"] == entry["name"]]
            if len(same) == 1 and sum(o["name"] == entry["name"] for o in left) == 1:
                pairs.append((entry, same[0]))
                left.remove(entry)
                right.remove(same[0])
        out: list[Finding] = []
        subject = Subject.RESOURCE_TEMPLATE
        for before, after in pairs:
            name = f"resourceTemplates/{after['name']}"
            out += self._described(name, subject, before, after)
            out += self._mime(name, subject, before, after)
            was, now = before["uriTemplate"], after["uriTemplate"]
            if was != now:
                gone = template_variables(was) - template_variables(now)
                new = template_variables(now) - template_variables(was)
                if gone or new:
                    rule = Rule.RESOURCE_TEMPLATE_VARIABLES_CHANGED
                    detail = ", ".join(
                        [
                            *(f"'{v}' removed" for v in sorted(gone)),
                            *(f"'{v}' added" for v in sorted(new)),
                        ]
                    )
                    what = f"URI template {now} (was {was}): variable {detail}"
                else:
                    rule = Rule.RESOURCE_TEMPLATE_URI_CHANGED
                    what = f"URI template {now} (was {was}), same variables"
                out.append(
                    self._finding(rule, subject, name, what, SENT, f"{name}.uriTemplate", was, now)
                )
        for entry in left:
            name = f"resourceTemplates/{entry['name']}"
            what = f"resource template {entry['uriTemplate']} removed: URIs built from it fail"
            out.append(
                self._finding(
                    Rule.RESOURCE_TEMPLATE_REMOVED,
                    subject,
                    name,
                    what,
                    SENT,
                    old=entry["uriTemplate"],
                )
            )
        for entry in right:
            name = f"resourceTemplates/{entry['name']}"
            what = f"resource template {entry['uriTemplate']} added"
            out.append(
                self._finding(
                    Rule.RESOURCE_TEMPLATE_ADDED,
                    subject,
                    name,
                    what,
                    SENT,
                    new=entry["uriTemplate"],
                )
            )
        return out

    # -- prompts -----------------------------------------------------------------------------

    def _prompts(
        self, olds: Mapping[str, Mapping[str, Any]], news: Mapping[str, Mapping[str, Any]]
    ) -> list[Finding]:
        def compare(
            name: str, before: Mapping[str, Any], after: Mapping[str, Any]
        ) -> list[Finding]:
            return [
                *self._described(name, Subject.PROMPT, before, after),
                *self._arguments(
                    name,
                    _keyed(before.get("arguments") or [], "name"),
                    _keyed(after.get("arguments") or [], "name"),
                ),
            ]

        rules = (Rule.PROMPT_REMOVED, Rule.PROMPT_ADDED)
        label = "prompt '{}'".format
        return self._listed(
            olds, news, "prompts", Subject.PROMPT, rules, label, "getting it fails", compare
        )

    def _arguments(
        self,
        name: str,
        olds: Mapping[str, Mapping[str, Any]],
        news: Mapping[str, Mapping[str, Any]],
    ) -> list[Finding]:
        out: list[Finding] = []
        for key in sorted(olds.keys() | news.keys()):
            path = f"{name}.arguments.{key}"
            before, after = olds.get(key), news.get(key)
            if after is None:
                what = f"argument '{key}' removed: the server ignores it"
                rule = Rule.PROMPT_ARGUMENT_REMOVED
                out.append(self._finding(rule, Subject.PROMPT, name, what, SENT, path, key))
                continue
            required = bool(after.get("required", False))
            if before is None:
                kind = "required" if required else "optional"
                impact = Impact(_B if required else _C, _C, False)
                what = f"argument '{key}' added ({kind})"
                rule = Rule.PROMPT_ARGUMENT_ADDED
                out.append(
                    self._finding(rule, Subject.PROMPT, name, what, SENT, path, None, kind, impact)
                )
                continue
            out += self._described(name, Subject.PROMPT, before, after, path)
            if required != bool(before.get("required", False)):
                rule = Rule.PROMPT_ARGUMENT_REQUIRED if required else Rule.PROMPT_ARGUMENT_OPTIONAL
                what = f"argument '{key}' is now {'required' if required else 'optional'}"
                out.append(
                    self._finding(
                        rule, Subject.PROMPT, name, what, SENT, path, not required, required
                    )
                )
        return out


def _body(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A root schema without what only frames it: its definitions (the comparer's own), dialect
    and id (zod-made tool schemas carry ``$schema``)."""
    return {k: v for k, v in schema.items() if k not in _FRAME}


def _values(delta: Delta) -> tuple[Any, Any]:
    return delta.old, delta.new


def _hint(annotations: Mapping[str, Any], hint: str, default: bool) -> str:
    value = annotations.get(hint)
    return f"{str(default).lower()} (default)" if value is None else str(value).lower()


def _flags(capabilities: Mapping[str, Any], prefix: str = "") -> frozenset[str]:
    """Every advertised capability as a dotted path; ``false`` and ``null`` count as absent."""
    found: set[str] = set()
    for key, value in capabilities.items():
        if value is False or value is None:
            continue
        path = f"{prefix}{key}"
        found.add(path)
        if is_object(value):
            found |= _flags(value, f"{path}.")
    return frozenset(found)
