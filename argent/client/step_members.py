"""The members of a recorded step on the wire: the ``project_root`` probe of ``flow-add-step``.

Over a link the client adds ``members`` (and nothing else: no ``content``, ``canonical`` or
``spelling``) to the probe's file-input object — the files the one recorded step makes the
tool-server read (``argent.client.collect_step``), sent like the members of a flow: inline up to
the budget, else ``POST /upload``. A step that reads no file sends an empty list, so the call is
always a stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from attrs import evolve

from argent.client.collect import Collection, Listing
from argent.client.collect_step import collect_step_members
from argent.client.flow_members import ArchivePoster, send_members
from argent.link.models import FileInput


async def attach_step_members(
    wire: FileInput,
    args: Mapping[str, Any],
    listing: Listing,
    *,
    post: ArchivePoster,
    log: Callable[[str], None] | None,
) -> tuple[FileInput, Collection]:
    """The probe with its ``members``, and the collection (for the baselines it may write)."""
    collection = await asyncio.to_thread(collect_step_members, args, list(listing))
    return evolve(wire, members=await send_members(collection, post=post, log=log)), collection
