"""Python's cyclic garbage collector, paused for work that builds a whole configuration."""

import gc
from contextlib import contextmanager


@contextmanager
def collector_paused():
    """Run the block without the cyclic garbage collector; reference counting still frees
    what the block drops.

    Freezing, converting and rendering 10,000 services makes millions of objects that live
    until the block ends, and the collector, started every few hundred allocations, walks
    them again and again: at 10,000 services a third of freezing and of rendering. The
    block's cycles, if any, wait for the next collection after it. The switch is the
    process's: other threads go without the collector meanwhile too, and a block inside
    another leaves it as it found it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
