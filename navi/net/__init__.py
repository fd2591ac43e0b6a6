"""Outbound connections Navi's tools make on the model's behalf: what may be reached, and how.

`guard` decides which addresses a URL may lead to (`NAVI_FETCH_ALLOWED_HOSTS`); `fetch` is the
httpx client that connects only to addresses the guard vetted and follows redirects hop by hop.
"""
