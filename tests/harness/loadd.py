"""fulcrum-loadd on the lab's servers, for the DLLC tests (root needed, like the lab).

Each server runs its own fulcrum-loadd reading its load from a file (``--source file:``),
answering only the balancer (``--allow 10.77.2.1/32``): HAProxy's agent-check on
:3333, the JSON the node agent reads on :3334. Tests set the loads by rewriting the files.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from pathlib import Path

from tests.harness.lab import LB_SERVER_SIDE_ADDR

REPO = Path(__file__).resolve().parents[2]
AGENT_PORT, HTTP_PORT = 3333, 3334
WINDOW, SAMPLE = "400ms", "100ms"  # short, so that tests see a new load within half a second


def build_loadd(directory: Path) -> Path:
    """fulcrum-loadd built static, as the appliance ships it."""
    path = directory / "fulcrum-loadd"
    go = shutil.which("go") or "/usr/local/go/bin/go"
    subprocess.run(
        [go, "build", "-o", str(path), "./cmd/fulcrum-loadd"],
        cwd=REPO / "agents",
        env={**os.environ, "CGO_ENABLED": "0"},
        check=True,
        timeout=300,
    )
    return path


def set_load(path: Path, text: str) -> None:
    """Replace a load file at once (fulcrum-loadd never reads half a file)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text + "\n")
    tmp.replace(path)


def balancer_get(lab, addr: str, path: str) -> tuple[int, str]:
    """GET http://addr:3334/path from the balancer's namespace: (status, body)."""
    proc = lab.exec(
        "lb",
        ["curl", "-s", "-o", "-", "-w", "\n%{http_code}", "--max-time", "2", f"http://{addr}:{HTTP_PORT}{path}"],
        capture_output=True,
        text=True,
    )
    body, _, status = proc.stdout.rpartition("\n")
    return int(status or 0), body


class LoadAgents:
    """One fulcrum-loadd per lab server; ``set(name, "0.5")`` changes a server's load."""

    def __init__(self, lab, binary: Path, workdir: Path, loads: dict[str, str]):
        self.lab, self.binary, self.workdir = lab, binary, workdir
        self.files = {name: workdir / f"{name}.load" for name in lab.servers}
        self.initial = dict(loads)
        self._procs: list[subprocess.Popen] = []
        self._exit = contextlib.ExitStack()

    def set(self, name: str, text: str) -> None:
        set_load(self.files[name], text)

    def __enter__(self) -> LoadAgents:
        for name, load in self.initial.items():
            self.set(name, load)
        for name in self.lab.servers:
            log = self._exit.enter_context(open(self.workdir / f"{name}.log", "wb"))
            argv = [str(self.binary), "--source", f"file:{self.files[name]}", "--allow", f"{LB_SERVER_SIDE_ADDR}/32"]
            argv += ["--window", WINDOW, "--sample", SAMPLE, "--log-level", "debug"]
            self._procs.append(
                subprocess.Popen(["ip", "netns", "exec", self.lab.ns(name), *argv], stdout=log, stderr=log)
            )
        deadline = time.monotonic() + 10
        for addr in self.lab.servers.values():
            while balancer_get(self.lab, addr, "/v1/load")[0] != 200:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"fulcrum-loadd on {addr} did not answer within 10s")
                time.sleep(0.05)
        return self

    def __exit__(self, *exc_info) -> None:
        for proc in self._procs:
            proc.terminate()
        codes = [proc.wait(timeout=10) for proc in self._procs]
        self._exit.close()
        if exc_info[0] is None:
            assert codes == [0] * len(codes), "fulcrum-loadd did not exit 0 on SIGTERM"
