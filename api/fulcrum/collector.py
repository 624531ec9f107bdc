"""Python's cyclic garbage collector, paused for work that builds a whole configuration."""

import gc
import threading
from contextlib import contextmanager

_lock = threading.Lock()
_pauses = {"open": 0, "was_enabled": False}  # the blocks under way, in any thread


@contextmanager
def collector_paused():
    """Run the block without the cyclic garbage collector; reference counting still frees
    what the block drops.

    Freezing, converting and rendering 10,000 services makes millions of objects that live
    until the block ends, and the collector, started every few hundred allocations, walks
    them again and again: at 10,000 services a third of freezing and of rendering. The
    block's cycles, if any, wait for the next collection after it. The switch is the
    process's, so the blocks of all threads are counted: the collector is back (if it was
    on before the first) when the last one ends, not when one ends while another runs (a
    console's poll freezing beside a publish)."""
    with _lock:
        if _pauses["open"] == 0:
            _pauses["was_enabled"] = gc.isenabled()
            gc.disable()
        _pauses["open"] += 1
    try:
        yield
    finally:
        with _lock:
            _pauses["open"] -= 1
            if _pauses["open"] == 0 and _pauses["was_enabled"]:
                gc.enable()
