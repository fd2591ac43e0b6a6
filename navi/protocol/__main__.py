"""`python -m navi.protocol [--write]`: the protocol's JSON Schema (see `navi.protocol.schema`)."""

import sys

from navi.protocol.schema import main

raise SystemExit(main(sys.argv[1:]))
