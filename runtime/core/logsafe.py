"""Peer-supplied text made safe for log lines: ``logger.warning("... %s", printable(method))``.

A method name, tool name, request id or error message comes from the peer; written raw, a
newline in it forges a log line of the attacker's choosing, and other control characters
(escape sequences, carriage returns) rewrite what a terminal shows. ``printable`` escapes every
character that ``str.isprintable`` rejects (control characters, line and paragraph separators,
unassigned code points) as ``\\n``, ``\\x1b``, ``\\u2028``..., escapes backslashes so an escape
cannot be faked, and cuts long values. It is lazy: the escaping runs only if the record is
emitted, so a debug line costs nothing when debug logging is off.

A warning the peer can trigger at will (a response to no request, a notification past the
bound) is written through a ``LogLimiter``: the first few as they come, then one summary per
interval saying how many were left out, so a flood of them cannot flood the log.
"""

from __future__ import annotations

import logging
import time
from typing import Final

__all__ = ["LogLimiter", "escape", "printable"]

#: Characters kept from a value before it is cut: enough to recognise it, not a payload.
LIMIT: Final = 200

_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def _escape_char(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def escape(text: str, limit: int = LIMIT, backslashes: bool = True) -> str:
    """``text`` on one printable line: non-printable characters (and backslashes, unless
    ``text`` is a ``repr`` that escaped them already) escaped, and cut after ``limit``
    characters (saying how many more there were)."""
    suffix = ""
    if len(text) > limit:
        suffix = f"...(+{len(text) - limit} chars)"
        text = text[:limit]
    if text.isprintable() and not (backslashes and "\\" in text):
        return text + suffix
    special = "\\" if backslashes else ""
    escaped = (_escape_char(c) if not c.isprintable() or c == special else c for c in text)
    return "".join(escaped) + suffix


class printable:  # used like a function, in log calls
    """A log argument that formats as ``escape(value)`` for a string, else as its ``repr``
    (escaped if it is not printable); with ``%r``, as the ``repr`` of any value."""

    __slots__ = ("limit", "value")

    def __init__(self, value: object, limit: int = LIMIT) -> None:
        self.value = value
        self.limit = limit

    def __str__(self) -> str:
        value = self.value
        if type(value) is str:
            return escape(value, self.limit)
        return escape(repr(value), self.limit, backslashes=False)

    def __repr__(self) -> str:
        return escape(repr(self.value), self.limit, backslashes=False)


class LogLimiter:
    """A token bucket for one kind of log record: ``burst`` records at once, refilled at one
    per ``interval`` seconds; the records left out meanwhile are counted and reported by the
    next one written (or by ``flush``)."""

    __slots__ = ("_clock", "_last", "_tokens", "burst", "interval", "logger", "suppressed")

    def __init__(self, logger: logging.Logger, *, burst: int = 10, interval: float = 60.0) -> None:
        self.logger = logger
        self.burst = burst
        self.interval = interval
        self.suppressed = 0
        self._tokens = float(burst)
        self._clock = time.monotonic
        self._last = self._clock()

    def log(self, level: int, message: str, *args: object) -> bool:
        """Write the record if the bucket allows (True), else count it as left out."""
        if not self.logger.isEnabledFor(level):
            return False
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) / self.interval)
        self._last = now
        if self._tokens < 1.0:
            self.suppressed += 1
            return False
        self._tokens -= 1.0
        if self.suppressed:
            message += " (and %d more like it left out of the log)"
            args = (*args, self.suppressed)
            self.suppressed = 0
        self.logger.log(level, message, *args)
        return True
