"""A pixel comparison on the CPU pool while another thread forks (a Chromium launched beside it).

A matrix product goes to OpenBLAS, whose pthread_atfork handlers stop its worker threads: a fork
during a product left the product spinning forever (an orphaned `argent flow run --workers 2`
burned a core for 40 minutes). The comparison uses element-wise arithmetic only."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import os, threading
import numpy as np
from argent.runner.pixel_compare import changed_mask

a = np.zeros((800, 1000, 4), dtype=np.uint8)
b = np.full((800, 1000, 4), 200, dtype=np.uint8)  # every pixel differs: the whole-image path
done = threading.Event()
rounds = 0

def compare():
    global rounds
    while not done.is_set():
        assert changed_mask(a, b).all()
        rounds += 1

worker = threading.Thread(target=compare, daemon=True)
worker.start()
for _ in range(150):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
done.set()
worker.join(30)
print("alive" if worker.is_alive() else f"finished after {rounds} comparisons")
"""


def test_comparisons_survive_forks_in_another_thread() -> None:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("finished after "), run.stdout
