"""``spelling`` on the wire: how a directory lists the basename of a path.

``{"state": "listed"}``, ``{"state": "case_folded", "actual": "<name>", "addressable": <bool>}``
or ``{"state": "absent"}``: the ``Spelling`` model (``argent.link.models``), whose own rule refuses
a case-folded spelling without its name or without ``addressable``. The client computes it with
``argent.link.paths.spelling_of``; the tool-server reads it back with the codec.
"""

from __future__ import annotations

from argent.link.models import LISTED, Spelling

__all__ = ["LISTED", "Spelling"]
