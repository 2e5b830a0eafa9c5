"""Every rule ``mcpbind diff`` can report, what it means, and how bad it is for each party.

One module holds the whole policy so that a reviewer can check it in one place. Severity is judged
from the view of code written for the OLD revision that now talks to a peer on the NEW one: for
each change we ask what happens to the *sender* of the affected message and to its *receiver*
(``Impact``). Who sender and receiver are (client or server) comes from ``receivers.py``; a rule's
severity is the worse of the two impacts. ``bindings`` says whether code importing the generated
bindings stops type-checking or importing (a class or field removed, renamed or retyped).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    """How a change affects protocol peers written for the old revision. Values are stable."""

    COMPATIBLE = "compatible"
    POTENTIALLY_BREAKING = "potentially-breaking"
    BREAKING = "breaking"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Severity.COMPATIBLE: 0, Severity.POTENTIALLY_BREAKING: 1, Severity.BREAKING: 2}


def worst(*severities: Severity) -> Severity:
    """The most severe of ``severities`` (compatible when none)."""
    return max(severities, key=lambda s: s.rank, default=Severity.COMPATIBLE)


class Rule(StrEnum):
    """Rule IDs. Values are stable: they appear in JSON output and CI configuration."""

    METHOD_ADDED = "METHOD_ADDED"
    METHOD_REMOVED = "METHOD_REMOVED"
    METHOD_DIRECTION_ADDED = "METHOD_DIRECTION_ADDED"
    METHOD_DIRECTION_REMOVED = "METHOD_DIRECTION_REMOVED"
    METHOD_RESULT_CHANGED = "METHOD_RESULT_CHANGED"
    NOTIFICATION_ADDED = "NOTIFICATION_ADDED"
    NOTIFICATION_REMOVED = "NOTIFICATION_REMOVED"
    NOTIFICATION_DIRECTION_ADDED = "NOTIFICATION_DIRECTION_ADDED"
    NOTIFICATION_DIRECTION_REMOVED = "NOTIFICATION_DIRECTION_REMOVED"
    CAPABILITY_ADDED = "CAPABILITY_ADDED"
    CAPABILITY_REMOVED = "CAPABILITY_REMOVED"
    DEFINITION_ADDED = "DEFINITION_ADDED"
    DEFINITION_REMOVED = "DEFINITION_REMOVED"
    DEFINITION_RENAMED = "DEFINITION_RENAMED"
    PROPERTY_ADDED = "PROPERTY_ADDED"
    PROPERTY_REMOVED = "PROPERTY_REMOVED"
    PROPERTY_REQUIRED_ADDED = "PROPERTY_REQUIRED_ADDED"
    PROPERTY_REQUIRED_REMOVED = "PROPERTY_REQUIRED_REMOVED"
    TYPE_WIDENED = "TYPE_WIDENED"
    TYPE_NARROWED = "TYPE_NARROWED"
    TYPE_CHANGED = "TYPE_CHANGED"
    REFERENCE_CHANGED = "REFERENCE_CHANGED"
    ENUM_VALUE_ADDED = "ENUM_VALUE_ADDED"
    ENUM_VALUE_REMOVED = "ENUM_VALUE_REMOVED"
    CONST_CHANGED = "CONST_CHANGED"
    UNION_MEMBER_ADDED = "UNION_MEMBER_ADDED"
    UNION_MEMBER_REMOVED = "UNION_MEMBER_REMOVED"
    ADDITIONAL_PROPERTIES_OPENED = "ADDITIONAL_PROPERTIES_OPENED"
    ADDITIONAL_PROPERTIES_CLOSED = "ADDITIONAL_PROPERTIES_CLOSED"
    DESCRIPTION_CHANGED = "DESCRIPTION_CHANGED"
    METHOD_BECAME_INPUT_REQUEST = "METHOD_BECAME_INPUT_REQUEST"
    METHOD_BECAME_REQUEST = "METHOD_BECAME_REQUEST"
    SERVER_REQUEST_REMOVED = "SERVER_REQUEST_REMOVED"
    METHOD_CAPABILITY_CHANGED = "METHOD_CAPABILITY_CHANGED"
    DEPRECATED = "DEPRECATED"
    UNDEPRECATED = "UNDEPRECATED"
    DIALECT_CHANGED = "DIALECT_CHANGED"
    # A server's surface (``mcpbind diff`` of two ``mcpbind inspect --json`` snapshots).
    TOOL_ADDED = "TOOL_ADDED"
    TOOL_REMOVED = "TOOL_REMOVED"
    TOOL_ARGUMENT_ADDED = "TOOL_ARGUMENT_ADDED"
    TOOL_ARGUMENT_REMOVED = "TOOL_ARGUMENT_REMOVED"
    TOOL_ARGUMENT_REQUIRED = "TOOL_ARGUMENT_REQUIRED"
    TOOL_ARGUMENT_OPTIONAL = "TOOL_ARGUMENT_OPTIONAL"
    OUTPUT_SCHEMA_ADDED = "OUTPUT_SCHEMA_ADDED"
    OUTPUT_SCHEMA_REMOVED = "OUTPUT_SCHEMA_REMOVED"
    TOOL_ANNOTATION_CHANGED = "TOOL_ANNOTATION_CHANGED"
    RESOURCE_ADDED = "RESOURCE_ADDED"
    RESOURCE_REMOVED = "RESOURCE_REMOVED"
    RESOURCE_MIME_TYPE_CHANGED = "RESOURCE_MIME_TYPE_CHANGED"
    RESOURCE_TEMPLATE_ADDED = "RESOURCE_TEMPLATE_ADDED"
    RESOURCE_TEMPLATE_REMOVED = "RESOURCE_TEMPLATE_REMOVED"
    RESOURCE_TEMPLATE_VARIABLES_CHANGED = "RESOURCE_TEMPLATE_VARIABLES_CHANGED"
    RESOURCE_TEMPLATE_URI_CHANGED = "RESOURCE_TEMPLATE_URI_CHANGED"
    PROMPT_ADDED = "PROMPT_ADDED"
    PROMPT_REMOVED = "PROMPT_REMOVED"
    PROMPT_ARGUMENT_ADDED = "PROMPT_ARGUMENT_ADDED"
    PROMPT_ARGUMENT_REMOVED = "PROMPT_ARGUMENT_REMOVED"
    PROMPT_ARGUMENT_REQUIRED = "PROMPT_ARGUMENT_REQUIRED"
    PROMPT_ARGUMENT_OPTIONAL = "PROMPT_ARGUMENT_OPTIONAL"
    SERVER_CAPABILITY_ADDED = "SERVER_CAPABILITY_ADDED"
    SERVER_CAPABILITY_REMOVED = "SERVER_CAPABILITY_REMOVED"
    # The keyword families: documented, judged and tagged by their ``Spec`` in each module.
    # constraints.py: bounds, multipleOf, uniqueItems, pattern, format, content*
    MINIMUM_ADDED = "MINIMUM_ADDED"
    MINIMUM_REMOVED = "MINIMUM_REMOVED"
    MINIMUM_INCREASED = "MINIMUM_INCREASED"
    MINIMUM_DECREASED = "MINIMUM_DECREASED"
    EXCLUSIVE_MINIMUM_ADDED = "EXCLUSIVE_MINIMUM_ADDED"
    EXCLUSIVE_MINIMUM_REMOVED = "EXCLUSIVE_MINIMUM_REMOVED"
    EXCLUSIVE_MINIMUM_INCREASED = "EXCLUSIVE_MINIMUM_INCREASED"
    EXCLUSIVE_MINIMUM_DECREASED = "EXCLUSIVE_MINIMUM_DECREASED"
    MIN_LENGTH_ADDED = "MIN_LENGTH_ADDED"
    MIN_LENGTH_REMOVED = "MIN_LENGTH_REMOVED"
    MIN_LENGTH_INCREASED = "MIN_LENGTH_INCREASED"
    MIN_LENGTH_DECREASED = "MIN_LENGTH_DECREASED"
    MIN_ITEMS_ADDED = "MIN_ITEMS_ADDED"
    MIN_ITEMS_REMOVED = "MIN_ITEMS_REMOVED"
    MIN_ITEMS_INCREASED = "MIN_ITEMS_INCREASED"
    MIN_ITEMS_DECREASED = "MIN_ITEMS_DECREASED"
    MIN_PROPERTIES_ADDED = "MIN_PROPERTIES_ADDED"
    MIN_PROPERTIES_REMOVED = "MIN_PROPERTIES_REMOVED"
    MIN_PROPERTIES_INCREASED = "MIN_PROPERTIES_INCREASED"
    MIN_PROPERTIES_DECREASED = "MIN_PROPERTIES_DECREASED"
    MIN_CONTAINS_ADDED = "MIN_CONTAINS_ADDED"
    MIN_CONTAINS_REMOVED = "MIN_CONTAINS_REMOVED"
    MIN_CONTAINS_INCREASED = "MIN_CONTAINS_INCREASED"
    MIN_CONTAINS_DECREASED = "MIN_CONTAINS_DECREASED"
    MAXIMUM_ADDED = "MAXIMUM_ADDED"
    MAXIMUM_REMOVED = "MAXIMUM_REMOVED"
    MAXIMUM_INCREASED = "MAXIMUM_INCREASED"
    MAXIMUM_DECREASED = "MAXIMUM_DECREASED"
    EXCLUSIVE_MAXIMUM_ADDED = "EXCLUSIVE_MAXIMUM_ADDED"
    EXCLUSIVE_MAXIMUM_REMOVED = "EXCLUSIVE_MAXIMUM_REMOVED"
    EXCLUSIVE_MAXIMUM_INCREASED = "EXCLUSIVE_MAXIMUM_INCREASED"
    EXCLUSIVE_MAXIMUM_DECREASED = "EXCLUSIVE_MAXIMUM_DECREASED"
    MAX_LENGTH_ADDED = "MAX_LENGTH_ADDED"
    MAX_LENGTH_REMOVED = "MAX_LENGTH_REMOVED"
    MAX_LENGTH_INCREASED = "MAX_LENGTH_INCREASED"
    MAX_LENGTH_DECREASED = "MAX_LENGTH_DECREASED"
    MAX_ITEMS_ADDED = "MAX_ITEMS_ADDED"
    MAX_ITEMS_REMOVED = "MAX_ITEMS_REMOVED"
    MAX_ITEMS_INCREASED = "MAX_ITEMS_INCREASED"
    MAX_ITEMS_DECREASED = "MAX_ITEMS_DECREASED"
    MAX_PROPERTIES_ADDED = "MAX_PROPERTIES_ADDED"
    MAX_PROPERTIES_REMOVED = "MAX_PROPERTIES_REMOVED"
    MAX_PROPERTIES_INCREASED = "MAX_PROPERTIES_INCREASED"
    MAX_PROPERTIES_DECREASED = "MAX_PROPERTIES_DECREASED"
    MAX_CONTAINS_ADDED = "MAX_CONTAINS_ADDED"
    MAX_CONTAINS_REMOVED = "MAX_CONTAINS_REMOVED"
    MAX_CONTAINS_INCREASED = "MAX_CONTAINS_INCREASED"
    MAX_CONTAINS_DECREASED = "MAX_CONTAINS_DECREASED"
    MULTIPLE_OF_ADDED = "MULTIPLE_OF_ADDED"
    MULTIPLE_OF_REMOVED = "MULTIPLE_OF_REMOVED"
    MULTIPLE_OF_NARROWED = "MULTIPLE_OF_NARROWED"
    MULTIPLE_OF_WIDENED = "MULTIPLE_OF_WIDENED"
    MULTIPLE_OF_CHANGED = "MULTIPLE_OF_CHANGED"
    UNIQUE_ITEMS_ADDED = "UNIQUE_ITEMS_ADDED"
    UNIQUE_ITEMS_REMOVED = "UNIQUE_ITEMS_REMOVED"
    PATTERN_ADDED = "PATTERN_ADDED"
    PATTERN_REMOVED = "PATTERN_REMOVED"
    PATTERN_CHANGED = "PATTERN_CHANGED"
    FORMAT_ADDED = "FORMAT_ADDED"
    FORMAT_REMOVED = "FORMAT_REMOVED"
    FORMAT_NARROWED = "FORMAT_NARROWED"
    FORMAT_WIDENED = "FORMAT_WIDENED"
    FORMAT_CHANGED = "FORMAT_CHANGED"
    CONTENT_ENCODING_ADDED = "CONTENT_ENCODING_ADDED"
    CONTENT_ENCODING_REMOVED = "CONTENT_ENCODING_REMOVED"
    CONTENT_ENCODING_CHANGED = "CONTENT_ENCODING_CHANGED"
    CONTENT_MEDIA_TYPE_ADDED = "CONTENT_MEDIA_TYPE_ADDED"
    CONTENT_MEDIA_TYPE_REMOVED = "CONTENT_MEDIA_TYPE_REMOVED"
    CONTENT_MEDIA_TYPE_CHANGED = "CONTENT_MEDIA_TYPE_CHANGED"
    CONTENT_SCHEMA_ADDED = "CONTENT_SCHEMA_ADDED"
    CONTENT_SCHEMA_REMOVED = "CONTENT_SCHEMA_REMOVED"
    CONTENT_SCHEMA_CHANGED = "CONTENT_SCHEMA_CHANGED"
    # containers.py
    PROPERTY_NAMES_ADDED = "PROPERTY_NAMES_ADDED"
    PROPERTY_NAMES_REMOVED = "PROPERTY_NAMES_REMOVED"
    PATTERN_PROPERTY_ADDED = "PATTERN_PROPERTY_ADDED"
    PATTERN_PROPERTY_REMOVED = "PATTERN_PROPERTY_REMOVED"
    DEPENDENT_REQUIRED_ADDED = "DEPENDENT_REQUIRED_ADDED"
    DEPENDENT_REQUIRED_REMOVED = "DEPENDENT_REQUIRED_REMOVED"
    DEPENDENT_SCHEMA_ADDED = "DEPENDENT_SCHEMA_ADDED"
    DEPENDENT_SCHEMA_REMOVED = "DEPENDENT_SCHEMA_REMOVED"
    DEPENDENCY_ADDED = "DEPENDENCY_ADDED"
    DEPENDENCY_REMOVED = "DEPENDENCY_REMOVED"
    UNEVALUATED_PROPERTIES_CLOSED = "UNEVALUATED_PROPERTIES_CLOSED"
    UNEVALUATED_PROPERTIES_OPENED = "UNEVALUATED_PROPERTIES_OPENED"
    PREFIX_ITEMS_ADDED = "PREFIX_ITEMS_ADDED"
    PREFIX_ITEMS_REMOVED = "PREFIX_ITEMS_REMOVED"
    PREFIX_ITEM_ADDED = "PREFIX_ITEM_ADDED"
    PREFIX_ITEM_REMOVED = "PREFIX_ITEM_REMOVED"
    ITEMS_CLOSED = "ITEMS_CLOSED"
    ITEMS_OPENED = "ITEMS_OPENED"
    CONTAINS_ADDED = "CONTAINS_ADDED"
    CONTAINS_REMOVED = "CONTAINS_REMOVED"
    UNEVALUATED_ITEMS_CLOSED = "UNEVALUATED_ITEMS_CLOSED"
    UNEVALUATED_ITEMS_OPENED = "UNEVALUATED_ITEMS_OPENED"
    # applicators.py
    NOT_ADDED = "NOT_ADDED"
    NOT_REMOVED = "NOT_REMOVED"
    NOT_CHANGED = "NOT_CHANGED"
    IF_ADDED = "IF_ADDED"
    IF_REMOVED = "IF_REMOVED"
    IF_CHANGED = "IF_CHANGED"
    THEN_ADDED = "THEN_ADDED"
    THEN_REMOVED = "THEN_REMOVED"
    ELSE_ADDED = "ELSE_ADDED"
    ELSE_REMOVED = "ELSE_REMOVED"
    ALL_OF_MEMBER_ADDED = "ALL_OF_MEMBER_ADDED"
    ALL_OF_MEMBER_REMOVED = "ALL_OF_MEMBER_REMOVED"
    UNION_BECAME_EXCLUSIVE = "UNION_BECAME_EXCLUSIVE"
    UNION_BECAME_INCLUSIVE = "UNION_BECAME_INCLUSIVE"
    SCHEMA_ID_ADDED = "SCHEMA_ID_ADDED"
    SCHEMA_ID_REMOVED = "SCHEMA_ID_REMOVED"
    SCHEMA_ID_CHANGED = "SCHEMA_ID_CHANGED"
    ANCHOR_ADDED = "ANCHOR_ADDED"
    ANCHOR_REMOVED = "ANCHOR_REMOVED"
    ANCHOR_CHANGED = "ANCHOR_CHANGED"
    DYNAMIC_ANCHOR_ADDED = "DYNAMIC_ANCHOR_ADDED"
    DYNAMIC_ANCHOR_REMOVED = "DYNAMIC_ANCHOR_REMOVED"
    DYNAMIC_ANCHOR_CHANGED = "DYNAMIC_ANCHOR_CHANGED"
    DYNAMIC_REF_ADDED = "DYNAMIC_REF_ADDED"
    DYNAMIC_REF_REMOVED = "DYNAMIC_REF_REMOVED"
    DYNAMIC_REF_CHANGED = "DYNAMIC_REF_CHANGED"
    VOCABULARY_CHANGED = "VOCABULARY_CHANGED"
    RECURSIVE_REF_CHANGED = "RECURSIVE_REF_CHANGED"
    RECURSIVE_ANCHOR_CHANGED = "RECURSIVE_ANCHOR_CHANGED"
    EMBEDDED_DIALECT_CHANGED = "EMBEDDED_DIALECT_CHANGED"
    # values.py
    CONST_ADDED = "CONST_ADDED"
    CONST_REMOVED = "CONST_REMOVED"
    ENUM_ADDED = "ENUM_ADDED"
    ENUM_REMOVED = "ENUM_REMOVED"
    TYPE_ADDED = "TYPE_ADDED"
    TYPE_REMOVED = "TYPE_REMOVED"
    ITEMS_ADDED = "ITEMS_ADDED"
    ITEMS_REMOVED = "ITEMS_REMOVED"
    ADDITIONAL_PROPERTIES_SCHEMA_ADDED = "ADDITIONAL_PROPERTIES_SCHEMA_ADDED"
    ADDITIONAL_PROPERTIES_SCHEMA_REMOVED = "ADDITIONAL_PROPERTIES_SCHEMA_REMOVED"
    NULLABLE_ADDED = "NULLABLE_ADDED"
    NULLABLE_REMOVED = "NULLABLE_REMOVED"
    DEFAULT_ADDED = "DEFAULT_ADDED"
    DEFAULT_REMOVED = "DEFAULT_REMOVED"
    DEFAULT_CHANGED = "DEFAULT_CHANGED"
    READ_ONLY_ADDED = "READ_ONLY_ADDED"
    READ_ONLY_REMOVED = "READ_ONLY_REMOVED"
    WRITE_ONLY_ADDED = "WRITE_ONLY_ADDED"
    WRITE_ONLY_REMOVED = "WRITE_ONLY_REMOVED"
    DEPRECATED_FLAG_ADDED = "DEPRECATED_FLAG_ADDED"
    DEPRECATED_FLAG_REMOVED = "DEPRECATED_FLAG_REMOVED"
    TITLE_CHANGED = "TITLE_CHANGED"
    EXAMPLES_CHANGED = "EXAMPLES_CHANGED"
    COMMENT_CHANGED = "COMMENT_CHANGED"
    UNKNOWN_KEYWORD_ADDED = "UNKNOWN_KEYWORD_ADDED"
    UNKNOWN_KEYWORD_REMOVED = "UNKNOWN_KEYWORD_REMOVED"
    UNKNOWN_KEYWORD_CHANGED = "UNKNOWN_KEYWORD_CHANGED"


#: The rules of a server-surface diff (two ``mcpbind inspect --json`` snapshots); the protocol
#: diff never reports them. A surface diff also reports schema rules inside tool schemas.
SURFACE_RULES = frozenset(
    {
        Rule.TOOL_ADDED,
        Rule.TOOL_REMOVED,
        Rule.TOOL_ARGUMENT_ADDED,
        Rule.TOOL_ARGUMENT_REMOVED,
        Rule.TOOL_ARGUMENT_REQUIRED,
        Rule.TOOL_ARGUMENT_OPTIONAL,
        Rule.OUTPUT_SCHEMA_ADDED,
        Rule.OUTPUT_SCHEMA_REMOVED,
        Rule.TOOL_ANNOTATION_CHANGED,
        Rule.RESOURCE_ADDED,
        Rule.RESOURCE_REMOVED,
        Rule.RESOURCE_MIME_TYPE_CHANGED,
        Rule.RESOURCE_TEMPLATE_ADDED,
        Rule.RESOURCE_TEMPLATE_REMOVED,
        Rule.RESOURCE_TEMPLATE_VARIABLES_CHANGED,
        Rule.RESOURCE_TEMPLATE_URI_CHANGED,
        Rule.PROMPT_ADDED,
        Rule.PROMPT_REMOVED,
        Rule.PROMPT_ARGUMENT_ADDED,
        Rule.PROMPT_ARGUMENT_REMOVED,
        Rule.PROMPT_ARGUMENT_REQUIRED,
        Rule.PROMPT_ARGUMENT_OPTIONAL,
        Rule.SERVER_CAPABILITY_ADDED,
        Rule.SERVER_CAPABILITY_REMOVED,
    }
)

#: What each core rule means; the keyword families document theirs in their ``Spec``s, and
#: ``taxonomy.RULE_DOCS`` has them all.
CORE_DOCS: dict[Rule, str] = {
    Rule.METHOD_ADDED: "A request method exists in a direction it did not exist in before. Compatible "
    "when a receiver capability gates it; otherwise receivers written for OLD do not implement it.",
    Rule.METHOD_REMOVED: "A request method is gone in a direction: senders written for OLD get "
    "'method not found'.",
    Rule.METHOD_DIRECTION_ADDED: "An existing method may now also be sent the other way.",
    Rule.METHOD_DIRECTION_REMOVED: "An existing method may no longer be sent in one direction.",
    Rule.METHOD_RESULT_CHANGED: "The set of result classes of a method changed (renames of the "
    "same shape are compatible; new result kinds may surprise the requester; removed ones break it).",
    Rule.NOTIFICATION_ADDED: "A notification exists in a direction it did not before; receivers "
    "ignore unknown notifications.",
    Rule.NOTIFICATION_REMOVED: "A notification is gone in a direction: receivers written for OLD "
    "that wait for it never get it.",
    Rule.NOTIFICATION_DIRECTION_ADDED: "An existing notification may now also be sent the other way.",
    Rule.NOTIFICATION_DIRECTION_REMOVED: "An existing notification may no longer be sent one way.",
    Rule.CAPABILITY_ADDED: "A side can advertise a new capability flag (nested flags are folded "
    "into their parent).",
    Rule.CAPABILITY_REMOVED: "A capability flag is gone: peers that relied on it lose the feature.",
    Rule.DEFINITION_ADDED: "A new definition (a new class in the bindings). Wire effects are "
    "reported where it is used.",
    Rule.DEFINITION_REMOVED: "A definition is gone (its class disappears from the bindings). Wire "
    "effects are reported where it was used.",
    Rule.DEFINITION_RENAMED: "A removed and an added definition have the same shape: the class is "
    "renamed; changes between the two shapes are reported under the new name.",
    Rule.PROPERTY_ADDED: "An object gained a property. Required: senders written for OLD do not "
    "send it. Optional: compatible (unless the object is closed to unknown properties).",
    Rule.PROPERTY_REMOVED: "An object lost a property. Receivers written for OLD that read it break "
    "(required) or lose data (optional); senders break if the object is closed.",
    Rule.PROPERTY_REQUIRED_ADDED: "An existing property became required: senders that omit it break.",
    Rule.PROPERTY_REQUIRED_REMOVED: "A property became optional: receivers that assume it is "
    "present may break.",
    Rule.TYPE_WIDENED: "A value now accepts more (a type, format or bound relaxed, a const or "
    "union lifted): receivers written for OLD may see values they do not handle.",
    Rule.TYPE_NARROWED: "A value now accepts less: senders written for OLD may send values that are "
    "rejected.",
    Rule.TYPE_CHANGED: "A value's type changed incompatibly both ways.",
    Rule.REFERENCE_CHANGED: "A reference now targets another definition whose shape accepts the "
    "same values (give or take optional properties): the field's class in the bindings changed; "
    "the severity is that of the differences between the two shapes, listed in the message.",
    Rule.ENUM_VALUE_ADDED: "An enum allows a new value: receivers that switch on it may not "
    "handle it.",
    Rule.ENUM_VALUE_REMOVED: "An enum value is gone: senders that use it are rejected.",
    Rule.CONST_CHANGED: "A constant (a discriminator such as 'type' or 'method') changed value.",
    Rule.UNION_MEMBER_ADDED: "A union allows a new member: receivers that switch on the members "
    "may not handle it.",
    Rule.UNION_MEMBER_REMOVED: "A union member is gone: senders that send it are rejected.",
    Rule.ADDITIONAL_PROPERTIES_OPENED: "An object now accepts unknown properties: strict "
    "receivers written for OLD may reject them.",
    Rule.ADDITIONAL_PROPERTIES_CLOSED: "An object now rejects unknown properties: senders that add "
    "extra properties break.",
    Rule.DESCRIPTION_CHANGED: "Only documentation changed (hidden unless --include-descriptions).",
    Rule.METHOD_BECAME_INPUT_REQUEST: "A server -> client request is now only embedded in an "
    "input-required result: servers written for OLD send a request NEW clients never answer, and "
    "clients written for OLD never see the embedded form.",
    Rule.METHOD_BECAME_REQUEST: "A method embedded in input-required results is a standalone "
    "server -> client request again (the reverse of METHOD_BECAME_INPUT_REQUEST).",
    Rule.SERVER_REQUEST_REMOVED: "A server -> client request is gone in every form: servers "
    "written for OLD that send it get 'method not found'; clients lose a handler they no longer need.",
    Rule.METHOD_CAPABILITY_CHANGED: "Another receiver capability (or none) now gates a method: "
    "senders checking the old flag and receivers advertising it may disagree.",
    Rule.DEPRECATED: "schema.ts marks a definition or property @deprecated: still valid, "
    "plan its removal.",
    Rule.UNDEPRECATED: "A @deprecated mark is gone from schema.ts (the item stays, or is removed: "
    "see the other changes at its path).",
    Rule.DIALECT_CHANGED: "The schema document declares another JSON Schema dialect ($schema): "
    "validators and tools reading the schema must support it; messages are unaffected.",
    Rule.TOOL_ADDED: "The server offers a new tool.",
    Rule.TOOL_REMOVED: "A tool is gone: clients calling it get an error.",
    Rule.TOOL_ARGUMENT_ADDED: "A tool's input schema has a new top-level argument. Required: "
    "clients that do not send it are rejected (breaking). Optional: compatible.",
    Rule.TOOL_ARGUMENT_REMOVED: "A tool argument is gone. Breaking when the input schema rejects "
    "unknown properties (additionalProperties: false); otherwise potentially-breaking: the server "
    "ignores what clients still send, so their intent is silently dropped.",
    Rule.TOOL_ARGUMENT_REQUIRED: "An optional tool argument became required: clients that omit "
    "it are rejected.",
    Rule.TOOL_ARGUMENT_OPTIONAL: "A required tool argument became optional: clients still send it.",
    Rule.OUTPUT_SCHEMA_ADDED: "A tool declares an output schema (structured results) it did not "
    "before: clients that ignore it are unaffected.",
    Rule.OUTPUT_SCHEMA_REMOVED: "A tool no longer declares an output schema: clients that read "
    "its structured result lose it.",
    Rule.TOOL_ANNOTATION_CHANGED: "A tool's behaviour hint changed (absent hints read as their "
    "defaults). Breaking when the tool became less safe (readOnlyHint true -> false, destructiveHint "
    "false -> true, idempotentHint true -> false, openWorldHint false -> true): a host's consent "
    "decisions change. The reverse is compatible.",
    Rule.RESOURCE_ADDED: "The server lists a new resource.",
    Rule.RESOURCE_REMOVED: "A listed resource is gone: clients reading its URI get an error.",
    Rule.RESOURCE_MIME_TYPE_CHANGED: "A resource or template declares another MIME type: clients "
    "that parse its contents by type may misread them.",
    Rule.RESOURCE_TEMPLATE_ADDED: "The server offers a new resource template.",
    Rule.RESOURCE_TEMPLATE_REMOVED: "A resource template is gone: URIs built from it are no longer "
    "served.",
    Rule.RESOURCE_TEMPLATE_VARIABLES_CHANGED: "A resource template (matched by name) has other "
    "variables: clients filling it in by variable name build URIs the server does not serve.",
    Rule.RESOURCE_TEMPLATE_URI_CHANGED: "A resource template (matched by name) has another URI "
    "pattern with the same variables: clients that build URIs from the listed template follow, "
    "URIs kept from before may not resolve.",
    Rule.PROMPT_ADDED: "The server offers a new prompt.",
    Rule.PROMPT_REMOVED: "A prompt is gone: clients getting it get an error.",
    Rule.PROMPT_ARGUMENT_ADDED: "A prompt has a new argument. Required: clients that do not send "
    "it are rejected (breaking). Optional: compatible.",
    Rule.PROMPT_ARGUMENT_REMOVED: "A prompt argument is gone: the server ignores what clients "
    "still send.",
    Rule.PROMPT_ARGUMENT_REQUIRED: "An optional prompt argument became required: clients that omit "
    "it are rejected.",
    Rule.PROMPT_ARGUMENT_OPTIONAL: "A required prompt argument became optional.",
    Rule.SERVER_CAPABILITY_ADDED: "The server advertises a new capability (nested flags folded "
    "into their parent).",
    Rule.SERVER_CAPABILITY_REMOVED: "The server no longer advertises a capability (or a flag such "
    "as listChanged): clients that relied on it lose the feature.",
}


class Variance(StrEnum):
    """Which way a change moves the set of values a schema accepts; names a folded change.

    Kept apart from severity so that A -> B and B -> A are mirror images by construction.
    """

    NONE = "none"
    WIDEN = "widen"
    NARROW = "narrow"
    BOTH = "both"

    def __or__(self, other: object) -> Variance:
        if not isinstance(other, Variance):
            return NotImplemented
        if self is other or other is Variance.NONE:
            return self
        if self is Variance.NONE:
            return other
        return Variance.BOTH


_VARIANCE: dict[Rule, Variance] = {
    Rule.PROPERTY_REQUIRED_ADDED: Variance.NARROW,
    Rule.PROPERTY_REQUIRED_REMOVED: Variance.WIDEN,
    Rule.TYPE_WIDENED: Variance.WIDEN,
    Rule.TYPE_NARROWED: Variance.NARROW,
    Rule.TYPE_CHANGED: Variance.BOTH,
    Rule.ENUM_VALUE_ADDED: Variance.WIDEN,
    Rule.ENUM_VALUE_REMOVED: Variance.NARROW,
    Rule.CONST_CHANGED: Variance.BOTH,
    Rule.UNION_MEMBER_ADDED: Variance.WIDEN,
    Rule.UNION_MEMBER_REMOVED: Variance.NARROW,
    Rule.ADDITIONAL_PROPERTIES_OPENED: Variance.WIDEN,
    Rule.ADDITIONAL_PROPERTIES_CLOSED: Variance.NARROW,
}


def variance(rule: Rule, *, required: bool = False) -> Variance:
    """A new required property narrows (messages without it are now rejected), a removed one
    widens; an optional one is neutral, like renames and prose."""
    if rule is Rule.PROPERTY_ADDED:
        return Variance.NARROW if required else Variance.NONE
    if rule is Rule.PROPERTY_REMOVED:
        return Variance.WIDEN if required else Variance.NONE
    return _VARIANCE.get(rule, Variance.NONE)


FOLDED_RULE = {
    Variance.NONE: Rule.REFERENCE_CHANGED,
    Variance.WIDEN: Rule.TYPE_WIDENED,
    Variance.NARROW: Rule.TYPE_NARROWED,
    Variance.BOTH: Rule.TYPE_CHANGED,
}


_C = Severity.COMPATIBLE
_P = Severity.POTENTIALLY_BREAKING
_B = Severity.BREAKING


@dataclass(frozen=True)
class Impact:
    """What a change does to the sender and the receiver written for OLD, and to bindings users."""

    sender: Severity
    receiver: Severity
    bindings: bool

    @property
    def severity(self) -> Severity:
        return worst(self.sender, self.receiver)

    def merge(self, other: Impact) -> Impact:
        return Impact(
            worst(self.sender, other.sender),
            worst(self.receiver, other.receiver),
            self.bindings or other.bindings,
        )


NO_IMPACT = Impact(_C, _C, False)

_FIXED: dict[Rule, Impact] = {
    Rule.METHOD_REMOVED: Impact(_B, _C, True),
    Rule.METHOD_DIRECTION_REMOVED: Impact(_B, _C, True),
    Rule.NOTIFICATION_ADDED: Impact(_C, _C, False),
    Rule.NOTIFICATION_DIRECTION_ADDED: Impact(_C, _C, False),
    Rule.NOTIFICATION_REMOVED: Impact(_C, _P, True),
    Rule.NOTIFICATION_DIRECTION_REMOVED: Impact(_C, _P, True),
    Rule.CAPABILITY_ADDED: Impact(_C, _C, False),
    Rule.CAPABILITY_REMOVED: Impact(_C, _P, True),
    Rule.DEFINITION_ADDED: Impact(_C, _C, False),
    Rule.DEFINITION_REMOVED: Impact(_C, _C, True),
    Rule.DEFINITION_RENAMED: Impact(_C, _C, True),
    Rule.PROPERTY_REQUIRED_ADDED: Impact(_B, _C, True),
    Rule.PROPERTY_REQUIRED_REMOVED: Impact(_C, _P, True),
    Rule.TYPE_WIDENED: Impact(_C, _P, True),
    Rule.TYPE_NARROWED: Impact(_B, _C, True),
    Rule.TYPE_CHANGED: Impact(_B, _B, True),
    Rule.REFERENCE_CHANGED: Impact(_C, _C, True),
    Rule.ENUM_VALUE_ADDED: Impact(_C, _P, False),
    Rule.ENUM_VALUE_REMOVED: Impact(_B, _C, True),
    Rule.CONST_CHANGED: Impact(_B, _B, True),
    Rule.UNION_MEMBER_ADDED: Impact(_C, _P, False),
    Rule.UNION_MEMBER_REMOVED: Impact(_B, _C, True),
    Rule.ADDITIONAL_PROPERTIES_OPENED: Impact(_C, _P, False),
    Rule.ADDITIONAL_PROPERTIES_CLOSED: Impact(_B, _C, True),
    Rule.DESCRIPTION_CHANGED: NO_IMPACT,
    Rule.METHOD_BECAME_INPUT_REQUEST: Impact(_B, _B, True),
    Rule.METHOD_BECAME_REQUEST: Impact(_B, _B, True),
    Rule.SERVER_REQUEST_REMOVED: Impact(_B, _C, True),
    Rule.METHOD_CAPABILITY_CHANGED: Impact(_P, _P, False),
    Rule.DEPRECATED: NO_IMPACT,
    Rule.UNDEPRECATED: NO_IMPACT,
    Rule.DIALECT_CHANGED: NO_IMPACT,
    # A server's surface: judged for clients written against the old one (the server is new).
    Rule.TOOL_ADDED: NO_IMPACT,
    Rule.TOOL_REMOVED: Impact(_B, _C, False),
    Rule.TOOL_ARGUMENT_REQUIRED: Impact(_B, _C, False),
    Rule.TOOL_ARGUMENT_OPTIONAL: NO_IMPACT,
    Rule.OUTPUT_SCHEMA_ADDED: NO_IMPACT,
    Rule.OUTPUT_SCHEMA_REMOVED: Impact(_C, _B, False),
    Rule.RESOURCE_ADDED: NO_IMPACT,
    Rule.RESOURCE_REMOVED: Impact(_B, _C, False),
    Rule.RESOURCE_MIME_TYPE_CHANGED: Impact(_C, _P, False),
    Rule.RESOURCE_TEMPLATE_ADDED: NO_IMPACT,
    Rule.RESOURCE_TEMPLATE_REMOVED: Impact(_B, _C, False),
    Rule.RESOURCE_TEMPLATE_VARIABLES_CHANGED: Impact(_B, _C, False),
    Rule.RESOURCE_TEMPLATE_URI_CHANGED: Impact(_P, _C, False),
    Rule.PROMPT_ADDED: NO_IMPACT,
    Rule.PROMPT_REMOVED: Impact(_B, _C, False),
    Rule.PROMPT_ARGUMENT_REMOVED: Impact(_P, _C, False),
    Rule.PROMPT_ARGUMENT_REQUIRED: Impact(_B, _C, False),
    Rule.PROMPT_ARGUMENT_OPTIONAL: NO_IMPACT,
    Rule.SERVER_CAPABILITY_ADDED: NO_IMPACT,
    Rule.SERVER_CAPABILITY_REMOVED: Impact(_C, _B, False),
}


def impact(rule: Rule) -> Impact:
    """The impact of a rule whose severity does not depend on the circumstances."""
    try:
        return _FIXED[rule]
    except KeyError:
        raise ValueError(f"{rule} depends on circumstances; use its own policy function") from None


def property_added(*, required: bool, closed: bool) -> Impact:
    """A new required property breaks senders; an optional one only a closed object's receivers."""
    if required:
        return Impact(_B, _C, True)
    return Impact(_C, _P if closed else _C, False)


def property_removed(*, required: bool, closed: bool) -> Impact:
    """Readers of a required property break, of an optional one lose data; senders only if closed."""
    return Impact(_B if closed else _C, _B if required else _P, True)


def method_added(*, guarded: bool) -> Impact:
    """A capability-gated method is opt-in; an ungated one must be implemented by every receiver."""
    return Impact(_C, _C if guarded else _P, False)


def result_changed(*, added: bool, removed: bool) -> Impact:
    """Results flow back to the requester: a new kind may surprise it, a removed one breaks it."""
    return Impact(
        _B if removed else _C,
        _P if added else _C,
        True,
    )


def fixed_impact(rule: Rule) -> Impact | None:
    """The impact of a core rule that does not depend on circumstances, else None."""
    return _FIXED.get(rule)
