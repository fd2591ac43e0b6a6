"""Runs inside the code_exec child: set resource limits, then run the user's script as __main__.

Not imported by Navi; executed as `python -I sandbox_bootstrap.py main.py`.
"""

import os
import resource
import runpy
import sys


def _limit(kind: int, value: int) -> None:
    _soft, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, hard if hard != resource.RLIM_INFINITY else value))


_limit(resource.RLIMIT_AS, int(os.environ.pop("NAVI_MEMORY_BYTES", str(512 * 1024 * 1024))))
_limit(resource.RLIMIT_CPU, int(os.environ.pop("NAVI_CPU_SECONDS", "31")))
_limit(resource.RLIMIT_FSIZE, 200 * 1024 * 1024)
_limit(resource.RLIMIT_CORE, 0)

script = os.path.abspath(sys.argv[1])
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(script))
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit:
    raise
except BaseException:
    import traceback

    kind, value, tb = sys.exc_info()
    # Show the user's frames only, not this bootstrap's or runpy's.
    while tb is not None and tb.tb_frame.f_code.co_filename != script:
        tb = tb.tb_next
    traceback.print_exception(kind, value, tb)
    sys.exit(1)
