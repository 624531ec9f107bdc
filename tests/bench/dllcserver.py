"""A CPU-bound HTTP server for the DLLC benchmark (the host and the guest: only modules of
Debian's python3-minimal, which is all the guest has).

Every request to any path but ``/health`` and ``/counters`` costs a fixed amount of CPU
work (``--work`` units of a pure-Python arithmetic loop), then gets ``<name>\\n`` with
``X-Server: <name>`` and ``Connection: close``: one request per connection, like the
study. Work, not time: when the server's cgroup is throttled the same request takes
longer, so the CPU quota of the cgroup the process sits in is its capacity.

Overload, as a server with a bounded request queue handles it: one thread accepts every
connection at once; ``--workers`` threads serve one request each (a prefork server's
``MaxClients``), at most ``--queue`` more wait for them, first come first served, and a
connection beyond that gets ``503`` straight away (load shedding). The wait is so bounded
by (workers + queue) / capacity, below the client's timeout, and every answer the server
works on is still wanted: an overloaded server serves at its capacity and refuses the
rest, instead of working on answers whose clients have left. For the same reason a
request whose connection has closed while it waited (the client gave up) is dropped
without the work.

    python3 dllcserver.py serve --listen 10.77.2.11:8081 --name fast --work 120
    python3 dllcserver.py calibrate     # CPU microseconds per work unit on this machine

``/health`` answers at once; ``/counters`` with the requests served, shed and abandoned
so far (JSON).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import select
import socket
import sys
import threading
import time

UNIT_ITERATIONS = 1000
REQUEST_TIMEOUT_S = 10.0
LISTEN_BACKLOG = 1024  # the acceptor drains it; queueing and shedding happen in the server
SWITCH_INTERVAL_S = 0.001  # the acceptor gets the GIL back quickly from busy workers


def burn(units: int) -> int:
    """``units`` x UNIT_ITERATIONS steps of a linear congruential generator (GIL held)."""
    x = 1
    for _ in range(units * UNIT_ITERATIONS):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
    return x


def calibrate(units: int = 50, samples: int = 21, pause_s: float = 0.05) -> float:
    """CPU microseconds per work unit: the median of ``samples`` spread over about a
    second (process CPU time: other work on the machine does not count, but it does slow
    a shared core, so the median, not the best)."""
    found = []
    for _ in range(samples):
        started = time.process_time()
        burn(units)
        found.append((time.process_time() - started) / units * 1e6)
        time.sleep(pause_s)
    return sorted(found)[len(found) // 2]


def read_request(conn: socket.socket) -> bytes:
    """The request line and headers (the benchmark sends no body)."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 16384:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def request_path(request: bytes) -> bytes:
    parts = request.split(b" ", 2)
    return parts[1] if len(parts) > 2 else b"/"


def client_gone(conn: socket.socket) -> bool:
    """The other end has closed while the request waited."""
    poller = select.poll()
    poller.register(conn, select.POLLIN)
    # Readable with nothing to read: end of stream. Not readable: still there.
    return bool(poller.poll(0)) and conn.recv(1, socket.MSG_PEEK) == b""


def response(name: str, text: str, status: str = "200 OK") -> bytes:
    body = text.encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
        f"X-Server: {name}\r\nConnection: close\r\n\r\n"
    ).encode()
    return head + body


class Server:
    """The acceptor, the bounded queue, the workers and their counters."""

    def __init__(self, name: str, work: int, workers: int, queue: int):
        self.name, self.work, self.workers, self.queue_limit = name, work, workers, queue
        self.counts = {"served": 0, "shed": 0, "abandoned": 0}
        self.waiting: collections.deque[tuple[socket.socket, bytes]] = collections.deque()
        self.busy = 0
        self.lock = threading.Condition()

    def count(self, what: str) -> None:
        with self.lock:
            self.counts[what] += 1

    def admit(self, conn: socket.socket) -> None:
        """The acceptor's part: read the request, answer the cheap ones, queue or shed."""
        conn.settimeout(REQUEST_TIMEOUT_S)
        request = read_request(conn)
        path = request_path(request)
        if not request or path in (b"/health", b"/counters"):
            with self.lock:
                text = json.dumps(self.counts) + "\n" if path == b"/counters" else "ok\n"
            with contextlib.suppress(OSError):
                conn.sendall(response(self.name, text))
            conn.close()
            return
        with self.lock:
            if self.busy + len(self.waiting) < self.workers + self.queue_limit:
                self.waiting.append((conn, request))
                self.lock.notify()
                return
            self.counts["shed"] += 1
        with contextlib.suppress(OSError):
            conn.sendall(response(self.name, "overloaded\n", "503 Service Unavailable"))
        conn.close()

    def accept_forever(self, listener: socket.socket) -> None:
        while True:
            conn, _ = listener.accept()
            with contextlib.suppress(OSError):  # the client gave up (timeout, reset)
                self.admit(conn)

    def work_forever(self) -> None:
        while True:
            with self.lock:
                while not self.waiting:
                    self.lock.wait()
                conn, _request = self.waiting.popleft()
                self.busy += 1
            try:
                with conn, contextlib.suppress(OSError):
                    if client_gone(conn):
                        self.count("abandoned")
                        continue
                    burn(self.work)
                    conn.sendall(response(self.name, f"{self.name}\n"))
                    self.count("served")
            finally:
                with self.lock:
                    self.busy -= 1


def serve(address: str, port: int, server: Server) -> None:
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((address, port))
    listener.listen(LISTEN_BACKLOG)
    for _ in range(server.workers):
        threading.Thread(target=server.work_forever, daemon=True).start()
    print(
        f"dllcserver {server.name}: {address}:{port}, {server.work} work units, "
        f"{server.workers} workers, queue {server.queue_limit}",
        flush=True,
    )
    server.accept_forever(listener)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dllcserver.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("serve", help="serve until killed")
    run.add_argument("--listen", required=True, help="ADDRESS:PORT")
    run.add_argument("--name", required=True, help="answered in the body and X-Server")
    run.add_argument("--work", type=int, required=True, help="work units per request")
    run.add_argument("--workers", type=int, default=4, help="requests served at once (default 4)")
    run.add_argument("--queue", type=int, default=16, help="requests waiting for a worker, more get 503 (default 16)")
    sub.add_parser("calibrate", help="print CPU microseconds per work unit")
    args = parser.parse_args(argv)
    if args.command == "calibrate":
        print(f"{calibrate():.2f}")
        return 0
    address, _, port = args.listen.rpartition(":")
    serve(address, int(port), Server(args.name, args.work, args.workers, args.queue))
    return 0


if __name__ == "__main__":
    sys.exit(main())
