"""``mcpbind serve TARGET --workers N --redis URL``: the cluster launcher on the command line.

The same code path as ``python -m mcpbind.runtime.cluster serve`` (and its former name
``python -m mcpbind.runtime.http.cluster``): both call ``cluster.serve_cluster``, which checks the
options, then TARGET. Here TARGET is imported, not only found, so one that does not import is
one line and exit status 2 before any worker starts; ``path/to/file.py:obj`` is also accepted
(its folder becomes ``--app-dir``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from mcpbind.runtime.cluster import check_target, serve_cluster

from ._common import OneLineCommand, fail, progress
from ._target import WELL_KNOWN, split_target

__all__ = ["cluster_target", "serve_command"]


def cluster_target(target: str, app_dir: str | None) -> tuple[str, str | None]:
    """(``module:attr``, app dir) for the workers; a file path names its folder and stem."""
    where, name = split_target(target)
    if where.endswith(".py") or "/" in where:
        path = Path(where).resolve()
        if not path.is_file():
            fail(f"{where}: no such file")
        where, app_dir = path.stem, str(path.parent)
    return f"{where}:{name or WELL_KNOWN[0]}", app_dir


EXAMPLE = """
\b
Examples:
  mcpbind serve examples.cluster.app:app --workers 3 --redis redis://127.0.0.1:6379 \\
      --port 9000 --haproxy haproxy.cfg --run-haproxy
"""


@click.command("serve", cls=OneLineCommand, epilog=EXAMPLE)
@click.argument("target")
@click.option(
    "--workers",
    default=3,
    show_default=True,
    type=click.IntRange(min=1),
    help="How many worker processes.",
)
@click.option(
    "--redis",
    "redis_url",
    metavar="URL",
    default=None,
    help="The shared Redis (without it each worker keeps its own state: only "
    "stateless-era requests then work on any worker).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Where to listen.")
@click.option(
    "--port",
    default=9000,
    show_default=True,
    type=int,
    help="The balancer's port; workers get port+1..port+N (0: free ports).",
)
@click.option("--app-dir", default=None, help="A folder to import TARGET from (first on sys.path).")
@click.option(
    "--haproxy",
    "haproxy_path",
    type=click.Path(path_type=Path),
    default=None,
    metavar="FILE",
    help="Write an haproxy.cfg balancing the workers here.",
)
@click.option("--run-haproxy", is_flag=True, help="Also run haproxy with it (needs --haproxy).")
@click.option("--haproxy-bin", default="haproxy", show_default=True, help="The haproxy to run.")
@click.option(
    "--check-ms", default=1000, show_default=True, type=int, help="haproxy's health-check interval."
)
@click.option(
    "--sticky-sessions",
    is_flag=True,
    help="haproxy sends a session's requests to the worker that issued its "
    "Mcp-Session-Id (saves forwarding them; default: round robin).",
)
@click.option("--restart", is_flag=True, help="Start a worker again if it dies.")  # fmt: skip
@click.option(
    "--durable-tasks",
    is_flag=True,
    help="Keep tasks in Redis (needs --redis): any worker answers for them, and a task whose "
    "worker dies is failed instead of lost.",
)
def serve_command(
    target: str,
    workers: int,
    redis_url: str | None,
    host: str,
    port: int,
    app_dir: str | None,
    haproxy_path: Path | None,
    run_haproxy: bool,
    haproxy_bin: str,
    check_ms: int,
    sticky_sessions: bool,
    restart: bool,
    durable_tasks: bool,
) -> None:
    """Run TARGET (module:obj or path/file.py:obj naming an App, or a function building an App
    or ASGI app) as N worker processes sharing state in Redis, optionally behind haproxy.
    Prints a line per process started, then `ready`; SIGINT or SIGTERM stops them all."""
    module_target, app_dir = cluster_target(target, app_dir)

    def check_imports(target: str, folder: str | None) -> None:
        # Imported here, not only found: a target that fails is one line before any worker
        # starts. `mcpbind` runs as a script, so the current folder is not on the path.
        check_target(target, folder or str(Path.cwd()))
        progress(f"starting {workers} worker(s) of {target}")

    try:
        status = serve_cluster(
            module_target,
            workers=workers,
            host=host,
            port=port,
            redis_url=redis_url,
            app_dir=app_dir,
            haproxy_path=haproxy_path,
            run_haproxy=run_haproxy,
            haproxy_binary=haproxy_bin,
            restart=restart,
            sticky=sticky_sessions,
            check_ms=check_ms,
            durable_tasks=durable_tasks,
            target_check=check_imports,
        )
    except ValueError as exc:
        fail(str(exc))
    sys.exit(status)


if __name__ == "__main__":
    serve_command(prog_name="mcpbind serve")
