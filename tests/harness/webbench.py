"""The WebBench file set (seeds-digest §000): what the lab's servers serve under ``/wb/``
and the request mix the benchmark drives through them.

One table is the single source of truth: the lab writes the files from it, the benchmark
passes its paths and shares to wrk's Lua script and checks the 404 share against it.
"""

from __future__ import annotations

from dataclasses import dataclass

WEBBENCH_URL_PREFIX = "/wb/"


@dataclass(frozen=True)
class WebBenchFile:
    """One entry of the mix: a file of ``size`` bytes (``None`` = absent, answers 404)."""

    name: str
    size: int | None
    share_percent: int  # as printed in the source; used as a weight

    @property
    def path(self) -> str:
        return WEBBENCH_URL_PREFIX + self.name

    @property
    def expected_status(self) -> int:
        return 404 if self.size is None else 200


WEBBENCH_MIX: tuple[WebBenchFile, ...] = (
    WebBenchFile("f223.gif", 223, 20),
    WebBenchFile("f735.gif", 735, 8),
    WebBenchFile("f1522.gif", 1522, 12),
    WebBenchFile("f2895.gif", 2895, 20),
    WebBenchFile("f6040.htm", 6040, 14),
    WebBenchFile("f11426.htm", 11426, 16),
    WebBenchFile("f22132.htm", 22132, 7),
    WebBenchFile("missing.htm", None, 2),
)

# The shares as printed in the source add up to 99 %, not 100 % (rounding in the original
# report). They are used as weights as they stand: one cycle of the mix is 99 requests.
MIX_CYCLE_LENGTH = sum(f.share_percent for f in WEBBENCH_MIX)
assert MIX_CYCLE_LENGTH == 99


def webbench_file_content(entry: WebBenchFile) -> bytes:
    """Deterministic bytes of exactly ``entry.size``: a GIF signature or an HTML page,
    padded with a repeating pattern (content does not matter, size does)."""
    if entry.size is None:
        raise ValueError(f"{entry.name} is the non-existent file of the mix")
    if entry.name.endswith(".gif"):
        head, tail = b"GIF89a", b";"
    else:
        head, tail = b"<html><body><pre>\n", b"\n</pre></body></html>\n"
    filler_len = entry.size - len(head) - len(tail)
    filler = (b"fulcrum webbench " * (filler_len // 17 + 1))[:filler_len]
    return head + filler + tail


def expected_not_found_share() -> float:
    """Fraction of requests the mix sends to the non-existent file (2/99)."""
    return sum(f.share_percent for f in WEBBENCH_MIX if f.size is None) / MIX_CYCLE_LENGTH
