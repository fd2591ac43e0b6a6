"""`python -m navi.tools.host`: the tool host process (started by Navi, never by hand)."""

from navi.tools.host.serve import main

main()
