"""What a call leaves on the client: the files its result tells the client to write, once it arrived.

A result may carry client-file directives: the text of a recording the client keeps (written only
from a recording tool's result, for the call's own flow: ``argent.client.client_files``) and the
baselines a run over a link updated (written only into the baseline directories of the call's runs
that update baselines: ``argent.client.baselines``). Both are applied only when the result has
arrived, so a call cut short writes nothing; each directive the client refuses is told, and the
result comes back with every directive replaced by what was written (or why not).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from argent.client.baselines import BaselineWriteScope, apply_baseline_writes
from argent.client.client_files import ClientFileCall, RefusedClientFile, apply_client_file_directives
from argent.client.members import flow_files_log_enabled, written_line


async def apply_writes(
    data: Any,
    call: ClientFileCall,
    scope: BaselineWriteScope,
    *,
    refused: Callable[[RefusedClientFile], None],
    note: Callable[[str], None],
) -> Any:
    """The result of ``call`` with its client files written: each refused text directive goes to
    ``refused``; with ``ARGENT_FLOW_FILES_LOG=1`` each baseline written is a ``[flow-files]`` line."""
    applied = await asyncio.to_thread(apply_client_file_directives, data, call)
    del data
    for refusal in applied.refused:
        refused(refusal)
    baselines = await asyncio.to_thread(apply_baseline_writes, applied.result, scope)
    if baselines.written and flow_files_log_enabled():
        for path in baselines.written:
            note(written_line(path))
    return baselines.result
