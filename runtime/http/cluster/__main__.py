"""``python -m mcpbind.runtime.http.cluster``: the former name of ``python -m mcpbind.runtime.cluster``."""

import runpy

runpy.run_module("mcpbind.runtime.cluster", run_name="__main__", alter_sys=True)
