"""The endpoints: ``Server`` and ``Client``, what users build on.

An endpoint owns handlers, capabilities and a lifecycle per era, and opens a ``Session`` per
connection (``Server.serve``) or one for its transport (``Client``); ``broadcast`` reaches every
session of a server in both eras.

May import: ``core``, ``eras``, ``transports`` (stdio and memory, for ``run_stdio`` and
``memory_transport``; the HTTP client only inside ``Client(url)``'s ``_connect``, on first use).
Plug-ins (tasks) only where an endpoint method opens them, on first use.
"""
