"""``python -m mcpbind.runtime.cluster``: N workers of one app, with the Redis backend.

    python -m mcpbind.runtime.cluster serve examples.cluster.app:app --workers 3 \\
        --redis redis://127.0.0.1:6379 --port 9000 --haproxy haproxy.cfg --run-haproxy

starts 3 workers on 127.0.0.1:9001..9003, writes an haproxy configuration balancing
127.0.0.1:9000 over them and runs haproxy; Ctrl-C (or SIGTERM) stops everything. ``worker`` runs
one worker in the foreground (what ``serve`` starts N of; useful under another supervisor such
as systemd, with ``MCPBIND_WORKER_ID`` and ``MCPBIND_REDIS_URL`` set). ``serve`` is
``serve_cluster``, the same function ``mcpbind serve`` runs.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from ._launch import run_worker, serve_cluster


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mcpbind.runtime.cluster",
        description="Run an MCP app as N worker processes behind a load balancer.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    target_help = (
        "MODULE:ATTR naming an App, or a callable returning an App, a StreamableHTTPServer or "
        "an ASGI app (given the worker's SharedState if it takes a `shared` parameter)"
    )
    serve = commands.add_parser("serve", help="start N workers (and haproxy) and watch them")
    serve.add_argument("target", help=target_help)
    serve.add_argument("--workers", type=int, default=3, help="how many (default 3)")
    serve.add_argument(
        "--redis", metavar="URL", help="the shared Redis (without it each worker keeps its own "
        "state: only stateless-era requests then work on any worker)"
    )  # fmt: skip
    serve.add_argument("--host", default="127.0.0.1", help="where to listen (default 127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=9000,
        help="the balancer's port; workers get port+1..port+N (0: free ports; default 9000)",
    )  # fmt: skip
    serve.add_argument("--app-dir", help="a folder to import TARGET from (put first on sys.path)")
    serve.add_argument("--haproxy", type=Path, metavar="FILE", help="write an haproxy.cfg here")
    serve.add_argument(
        "--run-haproxy", action="store_true", help="also run haproxy with it (needs --haproxy)"
    )
    serve.add_argument("--haproxy-bin", default="haproxy", help="the haproxy to run")
    serve.add_argument("--check-ms", type=int, default=1000, help="haproxy health-check interval")
    serve.add_argument(
        "--sticky-sessions", action="store_true",
        help="haproxy sends a session's requests to the worker that issued its Mcp-Session-Id "
        "(saves forwarding them; default: round robin for every request)",
    )  # fmt: skip
    serve.add_argument("--restart", action="store_true", help="start a worker again if it dies")
    serve.add_argument(
        "--durable-tasks", action="store_true",
        help="keep tasks in Redis (needs --redis): any worker answers for them, and a task "
        "whose worker dies is failed instead of lost",
    )  # fmt: skip
    worker = commands.add_parser("worker", help="run one worker in the foreground")
    worker.add_argument("target", help=target_help)
    worker.add_argument("--host", default="127.0.0.1")
    worker.add_argument("--port", type=int, required=True)
    worker.add_argument("--app-dir")
    worker.add_argument("--fd", type=int, help="serve on this inherited listening socket")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if args.command == "worker":
        run_worker(args.target, args.host, args.port, args.app_dir, args.fd)
        return 0
    try:
        return serve_cluster(
            args.target,
            workers=args.workers,
            host=args.host,
            port=args.port,
            redis_url=args.redis,
            app_dir=args.app_dir,
            haproxy_path=args.haproxy,
            run_haproxy=args.run_haproxy,
            haproxy_binary=args.haproxy_bin,
            restart=args.restart,
            sticky=args.sticky_sessions,
            check_ms=args.check_ms,
            durable_tasks=args.durable_tasks,
        )
    except ValueError as exc:
        # One line and status 2, as `mcpbind serve` reports a bad option.
        print(f"{_parser().prog}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
