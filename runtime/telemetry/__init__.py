"""OpenTelemetry for servers and clients: a span per request, trace context in ``_meta``.

::

    from mcpbind.runtime.telemetry import instrument

    instrument(server)          # or instrument(app.server), instrument(client)

``instrument`` needs only ``opentelemetry-api`` (the ``otel`` extra); spans go wherever the
application configured its tracer provider (none configured: the API's no-op one). It is
explicit: nothing of this package, nor ``opentelemetry``, is imported by an endpoint that was
not instrumented.

The telemetry layer, beside ``auth``. May import: ``endpoints`` and below, and
``opentelemetry`` (the only layer that does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpbind.runtime._exports import install

if TYPE_CHECKING:
    from ._spans import instrument as instrument

install(globals())
