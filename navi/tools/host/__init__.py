"""The tool host: the one process where user tools are imported and run, never Navi's server.

`client.py` is Navi's side (loading into a fresh host under the sandbox, the proxy `Tool`s,
timeouts, stop, restarts) and `process.py` one running host and its pipes; `serve.py` and
`imports.py` run inside the host (`python -m navi.tools.host`); `protocol.py` is the framed JSON
both sides speak. This package's `__init__` imports nothing, so the host process loads only what
it needs.
"""
