"""The proxies under test as processes in the lab's lb namespace.

Each system's files are written once into its own directory; ``ProxyInLab`` checks them
with the daemon (``haproxy -c`` / ``nginx -t``), starts it in the foreground as a child in
its own session, and stops it. The daemon comes from ``root`` (shipped.py: the appliance's
Debian 13 packages), or from the host when ``root`` is None. The Fulcrum-compiled
configuration runs unchanged, with the environment the node agent gives it
(``FULCRUM_CONF_DIR``, ``FULCRUM_RUN_DIR``).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from tests.bench import shipped
from tests.bench.loads import BenchError
from tests.bench.plan import COMPILED
from tests.harness.lab import Lab

STOP_TIMEOUT_S = 10
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def write_files(directory: Path, files: dict[str, bytes]) -> None:
    for relative, content in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def daemon_commands(system: str, conf_dir: Path) -> tuple[list[str], list[str], dict[str, str]]:
    """(check argv, run argv, extra environment) for one system's files in ``conf_dir``."""
    if system == "nginx":
        base = ["nginx", "-p", f"{conf_dir}/", "-c", str(conf_dir / "nginx.conf")]
        return [*base, "-t", "-q"], [*base, "-g", "daemon off;"], {}
    config = str(conf_dir / "haproxy.cfg")
    compiled = system in COMPILED
    env = {"FULCRUM_CONF_DIR": str(conf_dir), "FULCRUM_RUN_DIR": str(conf_dir / "run")} if compiled else {}
    return ["haproxy", "-c", "-q", "-f", config], ["haproxy", "-W", "-f", config], env


def _stat_fields(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
        # The command name is parenthesised and may hold spaces: split after it.
        return stat.read().rsplit(")", 1)[1].split()


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants, from /proc (HAProxy's or nginx's master and workers)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                children.setdefault(int(_stat_fields(int(entry))[1]), []).append(int(entry))
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue  # exited while we looked
    tree, pending = [], [root]
    while pending:
        pid = pending.pop()
        tree.append(pid)
        pending += children.get(pid, [])
    return tree


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (all its threads), 0 if it is gone."""
    try:
        fields = _stat_fields(pid)
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    # After the command: state(0) ppid(1) ... utime(11) stime(12), in clock ticks.
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class ProxyInLab:
    """One system's proxy in the lb namespace; ``start()`` / ``stop()`` may be repeated."""

    def __init__(self, lab: Lab, system: str, conf_dir: Path, root: Path | None = None):
        self.lab = lab
        self.system = system
        self.conf_dir = conf_dir
        for sub in ("run", "tmp"):
            (conf_dir / sub).mkdir(exist_ok=True)
        check_argv, run_argv, extra_env = daemon_commands(system, conf_dir)
        self.check_argv, self.run_argv = shipped.command(root, check_argv), shipped.command(root, run_argv)
        self.env = {**os.environ, **extra_env}
        self.log_path = conf_dir / "daemon.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        check = subprocess.run(
            [*self.lab.lb_exec_prefix, *self.check_argv], env=self.env, capture_output=True, text=True, timeout=60
        )
        if check.returncode != 0:
            raise BenchError(f"{self.system}: the daemon rejected its configuration: {check.stdout}{check.stderr}")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [*self.lab.lb_exec_prefix, *self.run_argv],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=STOP_TIMEOUT_S)
        self.proc = None
        time.sleep(0.2)  # let the kernel release the listening sockets

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def cpu_seconds(self) -> float:
        """User + system CPU time of the daemon and every process below it (workers)."""
        if self.proc is None:
            return 0.0
        return sum(process_cpu_seconds(pid) for pid in process_tree(self.proc.pid))

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-2000:] if self.log_path.exists() else ""
