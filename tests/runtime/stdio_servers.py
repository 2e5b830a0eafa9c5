"""Misbehaving stdio servers for the shutdown and crash tests: ``python stdio_servers.py MODE``.

Hand-written on purpose (no runtime): each answers ``initialize`` and then misbehaves.

* ``ignore-eof``: keeps running after stdin closes (must get SIGTERM);
* ``ignore-term``: also ignores SIGTERM (must get SIGKILL);
* ``crash``: exits with status 3 on ``tools/call``;
* ``crash-keep-pipe``: the same, but a grandchild keeps stdout open;
* ``chatty``: writes lines to stderr, answers pings;
* ``env``: names itself after ``$MCPBIND_TEST_VALUE`` and gives its cwd as its version;
* ``launcher``: starts the example server with a stdin pipe that outlives this process (held
  by a sleeping child), waits for it to answer a ping, prints both pids, and exits: the
  server's parent has died while it serves.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


def reply(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def initialize_result(request: dict[str, object], mode: str) -> dict[str, object]:
    params = request.get("params") or {}
    assert isinstance(params, dict)
    info = {"name": "misbehaving", "version": "0"}
    if mode == "env":
        info = {"name": os.environ.get("MCPBIND_TEST_VALUE", "unset"), "version": os.getcwd()}
    return {
        "protocolVersion": params.get("protocolVersion"),
        "capabilities": {"tools": {}},
        "serverInfo": info,
    }


def main(mode: str) -> None:
    if mode == "launcher":
        read_end, write_end = os.pipe()
        holder = subprocess.Popen(
            ["sleep", "30"],
            pass_fds=(write_end,),
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        server = subprocess.Popen(
            [sys.executable, "-m", "examples.server"],
            stdin=read_end,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        # Wait until the server answers, so it is serving when its parent dies.
        os.write(write_end, b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        assert server.stdout is not None
        server.stdout.readline()
        print(server.pid, holder.pid, flush=True)
        os._exit(0)
    if mode == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin:
        request = json.loads(line)
        method = request.get("method")
        if "id" not in request:
            continue
        if method == "initialize":
            reply(
                {"jsonrpc": "2.0", "id": request["id"], "result": initialize_result(request, mode)}
            )
        elif method == "tools/call" and mode.startswith("crash"):
            if mode == "crash-keep-pipe":
                subprocess.Popen(["sleep", "30"])
            os._exit(3)
        else:
            if mode == "chatty":
                print(f"stderr line for {method}", file=sys.stderr, flush=True)
            reply({"jsonrpc": "2.0", "id": request["id"], "result": {}})
    if mode in ("ignore-eof", "ignore-term"):
        time.sleep(60)


if __name__ == "__main__":
    main(sys.argv[1])
