"""``mcpbind diff OLD NEW --check-changelog``: the diff against the NEW revision's own changelog.

The changelog page is a list of entries (numbered or bulleted items under ``##`` headings), each in
prose. An entry is matched to the diff by the names it mentions, never by its wording:

* *code names*: backticked words, CamelCase words and method-like words (``tools/call``), split
  at ``/`` and ``.`` too (``io.modelcontextprotocol/logLevel`` also names ``logLevel``);
* *feature words*: bold words and link texts (``**tool annotations**``), matched when their
  letters, last word singular, are part of a changed definition's or method's name
  (``batching`` -> ``JSONRPCBatchRequest``);
* *plain words* of five letters or more, singular, outside a list of words every MCP schema
  uses (``tools``, ``request``...): they back an entry when one equals a changed property,
  definition or method segment (``icons`` -> ``Tool.icons``), or a part of a changed
  definition's name that few definitions share (``audio`` -> ``AudioContent``), but never count
  as a mention of a breaking change, being weaker evidence.

A change is named by its definition or method, the property names on its path, the methods whose
request or result it is, and a renamed definition's old and new names, all lower-cased. Then:

* a *breaking change not mentioned*: no entry names any of its names;
* an entry is *backed* when a name it mentions is a changed one, *unbacked* when it mentions
  names of either schema (definitions, methods, properties, ``_meta`` keys) of which none changed,
  and *prose* (not checkable) when it names nothing of the schemas: transport, authorization and
  process entries.

Matching by name is a heuristic: an entry that names a changed definition for another reason
counts as backed. What it finds is a list to read, not a verdict.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..ir import RevisionIR
from ..jsonvalues import is_array, is_object
from .model import Change
from .rules import Severity

__all__ = [
    "ChangelogCheck",
    "ChangelogEntry",
    "change_names",
    "check_changelog",
    "parse_changelog",
    "rare_parts",
    "simple_names",
    "vocabulary",
]

_HEADING = re.compile(r"^#{2,6}\s+(.*?)\s*$")
_ITEM = re.compile(r"^(\s*)(?:\d+\.|[-*])\s+(.*)$")
_BACKTICK = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*\[?([^*\]]+)\]?(?:\([^)]*\))?\*\*")
_LINK_TEXT = re.compile(r"(?<!!)\[([^\]]+)\]\(")
_CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+\b|\b[a-z]+[A-Z][A-Za-z0-9]*\b")
_METHOD = re.compile(r"\b[a-z]+(?:/[a-zA-Z_]+)+\b")
_REFERENCE = re.compile(r"(SEP-\d+|PR ?#\d+|RFC ?\d+)")
_PULL = re.compile(r"/pull/(\d+)")
_WORD = re.compile(r"[a-z0-9]+")
# Sections that never describe the schema: nothing there is checked.
_SKIPPED_SECTIONS = ("full changelog",)
# Path segments that name a position, not a name a changelog would use.
_POSITIONAL = frozenset({"", "[]", "params", "result", "items"})
#: A part of a definition name shared by more definitions than this names no one feature.
_RARE = 3
_CAPITALISED = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_PLAIN = re.compile(r"\b[a-z][a-z]{4,}\b")
# Words too common in MCP prose and schemas to tie an entry to a change.
_COMMON = frozenset(
    {
        *("added", "adding", "allow", "change", "clarify", "client", "content", "define"),
        *("definition", "error", "field", "format", "found", "header", "input", "message"),
        *("metadata", "method", "model", "notification", "optional", "param", "prompt"),
        *("protocol", "request", "require", "resource", "response", "result", "return"),
        *("schema", "server", "should", "status", "support", "their", "these", "those"),
        *("through", "type", "value", "version", "which", "would"),
    }
)


@dataclass(frozen=True)
class ChangelogEntry:
    """One item of the changelog: where it is, its text (one line), and what it mentions."""

    section: str
    number: int
    text: str
    names: frozenset[str]
    features: tuple[str, ...]
    references: tuple[str, ...]
    words: frozenset[str] = frozenset()

    @property
    def label(self) -> str:
        return f"{self.section} {self.number}"

    def summary(self, width: int = 90) -> str:
        """The entry's text without Markdown links and emphasis, cut at ``width``."""
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", self.text).replace("**", "")
        return text if len(text) <= width else text[: width - 1].rstrip() + "…"


@dataclass
class ChangelogCheck:
    """What ``--check-changelog`` found for one diff."""

    revision: str
    changelog: str
    entries: list[ChangelogEntry]
    breaking: int
    unmentioned: list[Change] = field(default_factory=list[Change])
    backed: list[ChangelogEntry] = field(default_factory=list[ChangelogEntry])
    unbacked: list[ChangelogEntry] = field(default_factory=list[ChangelogEntry])
    prose: list[ChangelogEntry] = field(default_factory=list[ChangelogEntry])

    @property
    def clean(self) -> bool:
        """Nothing to look at: every breaking change mentioned, no entry unbacked."""
        return not self.unmentioned and not self.unbacked

    def counts(self) -> dict[str, int]:
        return {
            "entries": len(self.entries),
            "backed": len(self.backed),
            "unbacked": len(self.unbacked),
            "prose": len(self.prose),
            "breaking": self.breaking,
            "unmentioned": len(self.unmentioned),
        }

    def to_json(self) -> dict[str, Any]:
        def entry(e: ChangelogEntry) -> dict[str, Any]:
            return {
                "section": e.section,
                "number": e.number,
                "text": e.summary(200),
                "names": sorted(e.names),
                "references": list(e.references),
            }

        return {
            "revision": self.revision,
            "source": self.changelog,
            "counts": self.counts(),
            "clean": self.clean,
            "unmentioned": [
                {"rule": c.rule.value, "path": c.path, "message": c.message}
                for c in self.unmentioned
            ],
            "unbacked": [entry(e) for e in self.unbacked],
            "prose": [entry(e) for e in self.prose],
        }


def _without_urls(text: str) -> str:
    """``text`` with link targets and bare URLs removed: their paths name pages, not the schema."""
    return re.sub(r"https?://\S+", " ", re.sub(r"\]\([^)]*\)", "] ", text))


def _code_names(text: str) -> set[str]:
    text = _without_urls(text)
    raw = set(_BACKTICK.findall(text)) | set(_CAMEL.findall(text)) | set(_METHOD.findall(text))
    names: set[str] = set()
    for token in raw:
        token = token.strip().strip("\"'").lower()
        if not token or " " in token:
            continue
        names.add(token)
        names.update(part for part in re.split(r"[/.]", token) if part)
    return names


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith(("ss", "us", "is")) else word


def _plain_words(text: str) -> frozenset[str]:
    text = _BACKTICK.sub(" ", _without_urls(text))
    words = {_singular(w) for w in _PLAIN.findall(text)}
    return frozenset(w for w in words if w not in _COMMON)


def _features(text: str) -> tuple[str, ...]:
    found: list[str] = []
    for phrase in [*_BOLD.findall(text), *_LINK_TEXT.findall(text)]:
        if phrase.isupper() or _REFERENCE.search(phrase) or re.search(r"\d", phrase):
            continue  # RFC keywords (**MUST**) and references (SEP-1234, #123) name no feature
        words = _WORD.findall(phrase.lower())
        if not words or len(words) > 4:
            continue
        last = words[-1]
        for suffix in ("ing", "s"):
            if last.endswith(suffix) and len(last) > len(suffix) + 3:
                last = last[: -len(suffix)]
                break
        found.append("".join([*words[:-1], last]))
    return tuple(dict.fromkeys(found))


def _items(markdown: str) -> Iterator[tuple[str, int, str]]:
    """(section, number in section, text joined on one line) of each top-level list item."""
    section = ""
    number = 0
    current: list[str] | None = None
    indent = 0
    in_front_matter = markdown.startswith("---")
    for index, line in enumerate(markdown.splitlines()):
        if in_front_matter:
            in_front_matter = not (index > 0 and line.strip() == "---")
            continue
        heading = _HEADING.match(line)
        item = _ITEM.match(line)
        ends = heading or (item and len(item.group(1)) <= indent) or not line.strip()
        if ends and current is not None:
            yield section, number, " ".join(current)
            current = None
        if heading:
            section, number = heading.group(1), 0
        elif item and current is None:
            indent = len(item.group(1))
            number += 1
            current = [item.group(2).strip()]
        elif current is not None:
            current.append(line.strip())
    if current is not None:
        yield section, number, " ".join(current)


def parse_changelog(markdown: str) -> list[ChangelogEntry]:
    """Every list item of a changelog page, with the names and features it mentions."""
    entries: list[ChangelogEntry] = []
    for section, number, text in _items(markdown):
        if section.lower().startswith(_SKIPPED_SECTIONS):
            continue
        found = [*_REFERENCE.findall(text), *(f"PR #{n}" for n in _PULL.findall(text))]
        references = tuple(dict.fromkeys(r.replace("PR#", "PR #") for r in found))
        entries.append(
            ChangelogEntry(
                section,
                number,
                text,
                frozenset(_code_names(text)),
                _features(text),
                references,
                _plain_words(text),
            )
        )
    return entries


def _property_names(schema: Any, out: set[str]) -> None:
    if is_object(schema):
        properties = schema.get("properties")
        if is_object(properties):
            out.update(name.lower() for name in properties)
        for value in schema.values():
            _property_names(value, out)
    elif is_array(schema):
        for value in schema:
            _property_names(value, out)


def vocabulary(irs: Iterable[RevisionIR]) -> frozenset[str]:
    """Every name of the schemas a changelog could mention, lower-cased."""
    names: set[str] = set()
    for ir in irs:
        names.update(n.lower() for n in ir.definitions)
        names.update(m.method.lower() for m in ir.methods)
        names.update(n.method.lower() for n in ir.notifications)
        for key in ir.meta_keys:
            names.update(part.lower() for part in (key, *key.split("/")) if part)
        for definition in ir.definitions.values():
            _property_names(definition.schema, names)
    return frozenset(names)


def _owners(irs: Iterable[RevisionIR]) -> dict[str, set[str]]:
    """Definition name -> the methods whose request, params or result it is (lower-cased)."""
    owners: dict[str, set[str]] = {}
    for ir in irs:
        for method in ir.methods:
            for name in (method.request, method.params, *method.results):
                if name:
                    owners.setdefault(name, set()).add(method.method.lower())
        for note in ir.notifications:
            for name in (note.notification, note.params):
                if name:
                    owners.setdefault(name, set()).add(note.method.lower())
    return owners


def change_names(change: Change, owners: dict[str, set[str]]) -> set[str]:
    """The names a changelog entry could use for ``change``."""
    names = {change.name.lower(), *owners.get(change.name, ())}
    segments = re.split(r"\.|\[\]", change.path.split(" ", 1)[0])
    names.update(s.lower() for s in segments[1:] if s.lower() not in _POSITIONAL)
    for value in (change.old, change.new):
        if isinstance(value, str) and re.fullmatch(r"[A-Za-z_][\w/]*", value):
            names.update({value.lower(), *owners.get(value, ())})
    return names


def simple_names(change: Change, rare: frozenset[str]) -> set[str]:
    """The single words naming ``change`` that plain words may equal: its definition or method
    name whole, and split at capitals where the part is ``rare`` (``AudioContent`` -> ``audio``),
    the properties on its path whole, its method's segments; singular, lower-cased."""
    segments = re.split(r"\.|\[\]|\|\d+", change.path.split(" ", 1)[0])[1:]
    words = {change.name.lower(), *change.name.lower().split("/")}
    words.update(s.lower() for s in segments if s.lower() not in _POSITIONAL)
    words.update(part for part in _parts(change.name) if part in rare)
    return {_singular(w) for w in words if w}


def _parts(name: str) -> set[str]:
    return {part.lower() for part in _CAPITALISED.findall(name)}


def rare_parts(irs: Iterable[RevisionIR]) -> frozenset[str]:
    """Parts of definition names (split at capitals) that at most ``_RARE`` definitions share:
    ``Audio``, ``Icon``; not ``Message`` or ``Request``."""
    counts: Counter[str] = Counter()
    for name in {n for ir in irs for n in ir.definitions}:
        counts.update(_parts(name))
    return frozenset(part for part, n in counts.items() if n <= _RARE)


def _matches(entry: ChangelogEntry, names: set[str]) -> bool:
    if entry.names & names:
        return True
    squashed = [re.sub(r"[^a-z0-9]", "", n) for n in names]
    return any(feature in name for feature in entry.features for name in squashed)


def check_changelog(
    changes: list[Change],
    markdown: str,
    revision: str,
    source: str,
    irs: tuple[RevisionIR, RevisionIR],
) -> ChangelogCheck:
    """Match the diff's ``changes`` against the changelog page ``markdown`` of ``revision``."""
    entries = parse_changelog(markdown)
    owners = _owners(irs)
    known = vocabulary(irs)
    named = [(change, change_names(change, owners)) for change in changes]
    breaking = [(c, n) for c, n in named if c.severity is Severity.BREAKING]
    result = ChangelogCheck(revision, source, entries, len(breaking))
    seen: set[tuple[str, str]] = set()
    for change, names in breaking:
        key = (change.rule.value, change.path)
        if key not in seen and not any(_matches(e, names) for e in entries):
            seen.add(key)  # one row per rule and path: a union's members removed are one finding
            result.unmentioned.append(change)
    rare = rare_parts(irs)
    simple: set[str] = set()
    for change in changes:
        simple |= simple_names(change, rare)
    for entry in entries:
        if any(_matches(entry, n) for _, n in named) or entry.words & simple:
            result.backed.append(entry)
        elif entry.names & known:
            result.unbacked.append(entry)
        else:
            result.prose.append(entry)
    return result
