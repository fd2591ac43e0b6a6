"""The certificate store, loaded once per process.

httpx loads the system's (or certifi's) certificates for every client it makes — about 40 ms of
processor time each, even for a client that only ever speaks plain HTTP to 127.0.0.1. Everything
in Navi that makes clients as it goes (a fetch, a status check, a CLI command's requests, a push)
passes this one verifying context instead. `SSL_CERT_FILE` and `SSL_CERT_DIR` are honoured as
httpx honours them.
"""

from __future__ import annotations

import functools
import ssl


@functools.cache
def ca_context() -> ssl.SSLContext:
    """httpx's default verifying context, built on first use and shared (it is read-only after)."""
    import httpx

    return httpx.create_ssl_context()
