"""The affinity of a tool call: one random value a balancer hashes on to keep a call in one place.

Over a link a call may first send members or an app to ``POST /upload``; the tool-server that
runs the call must be the one that holds those uploads. In a fleet behind a load balancer
(INTERFACE.md §10) the client therefore sends ``X-Argent-Affinity`` with one fresh random value
per tool call, on the call and on every upload of that call, and the balancer hashes on it
(``hash $http_x_argent_affinity consistent;`` in nginx). Other requests (``GET /tools``, the link
preflight) carry none: they may land anywhere.
"""

from __future__ import annotations

import secrets

AFFINITY_HEADER = "X-Argent-Affinity"
#: Random bytes of one value: 128 bits, so two calls never share a value by chance.
AFFINITY_BYTES = 16


def new_affinity() -> str:
    """A fresh value for one tool call: 32 lowercase hex digits."""
    return secrets.token_hex(AFFINITY_BYTES)
