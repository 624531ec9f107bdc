"""A steady HTTP request loop, for measuring what a client sees during a failover.

Every ``interval`` it starts one GET per URL on a new connection, whatever the earlier
ones are doing, and gives each ``timeout`` to answer; one JSON line per request goes to
``--out``: ``{"t": <CLOCK_MONOTONIC at start>, "url": i, "ok": bool, "server": "s1",
"ms": 1.2, "error": "..."}``. CLOCK_MONOTONIC is the host's, so the parent process can
put its own events (a kill, a link cut) on the same axis.

Run it inside a namespace (standard library only, so the system python3 does)::

    ip netns exec fl-cl python3 -m tests.harness.requestloop --out loop.jsonl http://10.77.100.10/

``RequestLoop`` starts and stops it from a test; ``longest_gap`` reads the result.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[2]


async def _get(url: str, timeout: float) -> tuple[bool, str, str]:
    """One GET on a new connection: (answered 200, X-Server, error)."""
    parts = urlsplit(url)
    writer = None
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
            request = f"GET {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n"
            writer.write(request.encode())
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            await reader.read()
    except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as err:
        return False, "", type(err).__name__ + (f": {err}" if str(err) else "")
    finally:
        if writer is not None:
            writer.close()
    status = head.split(" ", 2)[1] if " " in head else ""
    server = next((ln.split(":", 1)[1].strip() for ln in head.split("\r\n") if ln.lower().startswith("x-server:")), "")
    return status == "200", server, "" if status == "200" else f"HTTP {status}"


async def _loop(urls: list[str], interval: float, timeout: float, out, stop: asyncio.Event) -> None:
    pending = set()

    async def one(index: int, url: str) -> None:
        start = time.monotonic()
        ok, server, error = await _get(url, timeout)
        record = {"t": round(start, 6), "url": index, "ok": ok, "server": server}
        record |= {"ms": round((time.monotonic() - start) * 1000, 2), "error": error}
        out.write(json.dumps(record) + "\n")

    tick = time.monotonic()
    while not stop.is_set():
        for index, url in enumerate(urls):
            task = asyncio.create_task(one(index, url))
            pending.add(task)
            task.add_done_callback(pending.discard)
        tick += interval
        # Fixed rate: a late tick starts the next one at once rather than drifting.
        await asyncio.sleep(max(0.0, tick - time.monotonic()))
    if pending:
        await asyncio.wait(pending)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tests.harness.requestloop", description=__doc__.split("\n")[0])
    parser.add_argument("urls", nargs="+")
    parser.add_argument("--out", required=True, help="JSON lines, one per request")
    parser.add_argument("--interval-ms", type=float, default=20)
    parser.add_argument("--timeout-ms", type=float, default=250)
    args = parser.parse_args(argv)

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        with open(args.out, "a", buffering=1) as out:
            await _loop(args.urls, args.interval_ms / 1000, args.timeout_ms / 1000, out, stop)

    asyncio.run(run())
    return 0


@dataclass
class Gap:
    """The longest run of failed requests to one URL."""

    failed: int  # requests in the run
    ms: float  # from the first failure's start to the next success's start
    start: float  # monotonic start of the first failure (0 when none failed)

    def as_dict(self) -> dict:
        return {"failed": self.failed, "ms": round(self.ms, 1), "start": self.start}


def longest_gap(records: list[dict], url: int = 0, after: float = 0.0, before: float = float("inf")) -> Gap:
    """The longest run of consecutive failures (by start time) to ``url`` within [after, before]."""
    rows = sorted((r for r in records if r["url"] == url and after <= r["t"] <= before), key=lambda r: r["t"])
    best, run_start, run_len = Gap(0, 0.0, 0.0), None, 0
    for row in rows:
        if not row["ok"]:
            run_start = row["t"] if run_start is None else run_start
            run_len += 1
            continue
        if run_start is not None and row["t"] - run_start > best.ms / 1000:
            best = Gap(run_len, (row["t"] - run_start) * 1000, run_start)
        run_start, run_len = None, 0
    if run_start is not None and rows and (rows[-1]["t"] - run_start) * 1000 > best.ms:
        best = Gap(run_len, float("inf"), run_start)  # never recovered
    return best


class RequestLoop:
    """``requestloop`` in a namespace, as a context manager; ``records()`` at any time."""

    def __init__(self, namespace: str, urls: list[str], out: Path, interval_ms: float = 20, timeout_ms: float = 250):
        self.namespace, self.urls, self.out = namespace, urls, Path(out)
        self.interval_ms, self.timeout_ms = interval_ms, timeout_ms
        self._proc: subprocess.Popen | None = None

    def __enter__(self) -> RequestLoop:
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self) -> None:
        self.out.unlink(missing_ok=True)
        argv = ["ip", "netns", "exec", self.namespace, sys.executable, "-m", "tests.harness.requestloop"]
        argv += ["--out", str(self.out), "--interval-ms", str(self.interval_ms), "--timeout-ms", str(self.timeout_ms)]
        self._proc = subprocess.Popen([*argv, *self.urls], cwd=REPO, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while not self.records() and time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"request loop exited: {self._proc.stderr.read().decode()}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self._proc is None:
            return
        self._proc.send_signal(signal.SIGTERM)
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    def records(self) -> list[dict]:
        if not self.out.exists():
            return []
        lines = self.out.read_text().splitlines()
        return [json.loads(line) for line in lines if line.endswith("}")]

    def answered_since(self, since: float, url: int = 0) -> list[dict]:
        return [r for r in self.records() if r["url"] == url and r["t"] >= since and r["ok"]]


if __name__ == "__main__":
    sys.exit(main())
