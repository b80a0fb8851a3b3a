"""CPU-heavy work — parsing a flow, reading a tar, decoding and diffing PNGs — runs on a pool of its own.

Not on the event loop, where it would stall every other call; and not on the loop's default
executor either: aiofiles and every ``asyncio.to_thread`` file operation queue there, so a few
hostile worst-case parses (seconds each) would hold every default worker and stall every other
client's file reads and writes. ``run_cpu`` is the one way to run such work.

The pool is small (``limits.CPU_WORKER_THREADS``): the GIL runs one thread's Python at a time, so
more threads would add memory, not throughput. Its threads are daemon threads that the interpreter
does not wait for at exit, so a server told to stop exits within its grace even while a parse of
seconds is under way (the work is pure, or writes only the server's own temp files, which the next
server on that temp dir reclaims).

Threads share the GIL: while a pool thread runs Python, the loop thread waits for the GIL at each
of its many I/O points for up to the interpreter's switch interval (5 ms by default), so a call of
a few milliseconds would take a second. ``prompt_gil_handoff`` shortens the interval while a
server serves (``limits.GIL_SWITCH_INTERVAL_SECONDS``).

This module imports nothing of ours but the limits, so every layer (``flows`` included) may use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar

from argent.limits import CPU_WORKER_THREADS, GIL_SWITCH_INTERVAL_SECONDS

__all__ = ["CPU_POOL", "CpuPool", "prompt_gil_handoff", "run_cpu"]

P = ParamSpec("P")
T = TypeVar("T")

_Job = tuple["Future[Any]", Callable[[], Any]]


class CpuPool(Executor):
    """At most ``workers`` daemon threads, started as work arrives, taking jobs in arrival order."""

    def __init__(self, workers: int, name: str = "argent-cpu") -> None:
        if workers < 1:
            raise ValueError("a CPU pool needs at least one worker")
        self.workers = workers
        self.name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        #: Jobs submitted and not yet finished: a new thread starts while they outnumber the threads.
        self._outstanding = 0
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot run new work on a CPU pool that was shut down")
            self._jobs.put((future, functools.partial(fn, *args, **kwargs)))
            self._outstanding += 1
            started = len(self._threads)
            if started < self.workers and self._outstanding > started:
                thread = threading.Thread(target=self._work, name=f"{self.name}-{started}", daemon=True)
                self._threads.append(thread)
                thread.start()
        return future

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            future, call = job
            if future.set_running_or_notify_cancel():
                try:
                    result = call()
                except BaseException as exc:
                    future.set_exception(exc)
                    del exc  # no reference cycle through the traceback
                else:
                    future.set_result(result)
            del job, future, call
            with self._lock:
                self._outstanding -= 1

    @property
    def threads(self) -> int:
        """Threads started so far (never more than ``workers``)."""
        return len(self._threads)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        if cancel_futures:
            while True:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is not None:
                    job[0].cancel()
                    with self._lock:
                        self._outstanding -= 1
        for _ in threads:
            self._jobs.put(None)
        if wait:
            for thread in threads:
                thread.join()


#: The process's pool for CPU-heavy work.
CPU_POOL = CpuPool(CPU_WORKER_THREADS)


async def run_cpu(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``fn(*args, **kwargs)`` on ``CPU_POOL`` (with this task's context variables), awaited.

    Cancelling the await does not stop the work: as with ``asyncio.to_thread``, it runs to its end."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    call = functools.partial(context.run, fn, *args, **kwargs)
    return await loop.run_in_executor(CPU_POOL, call)


@contextlib.contextmanager
def prompt_gil_handoff(interval: float = GIL_SWITCH_INTERVAL_SECONDS) -> Iterator[None]:
    """Within the block, a thread running Python hands the GIL to a waiting one after ``interval``
    seconds (the interpreter's switch interval, process-wide); restored afterwards."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        yield
    finally:
        sys.setswitchinterval(before)
