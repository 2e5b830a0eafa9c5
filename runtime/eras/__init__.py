"""The protocol eras: how a session starts and what each era adds.

The handshake era (2024-11-05 .. 2025-11-25: ``initialize``, then requests; ``lifecycle``) and
the stateless era (2026-07-28: every request carries its revision, client info and capabilities
in ``_meta``; ``stateless``, ``stateless_client``), with what the stateless era adds: multi
round-trip requests answered with input-required results (``input_required``) and
``subscriptions/listen`` (``subscriptions``, ``subscriptions_client``). A lifecycle is what a
``Session`` asks before routing (``ClientLifecycle``/``ServerLifecycle``); a server of both eras
builds its stateless one with the first message that needs it (``both``).

May import: ``core``. Not transports, endpoints or plug-ins.
"""
