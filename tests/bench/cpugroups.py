"""CPU-limited control groups for benchmark processes (root; stdlib only).

A ``CpuGroup`` caps the processes put into it at a fraction of one CPU and accounts the
CPU time they use. Two kernels' interfaces, the same limit:

- cgroup v1 (this project's Debian 12 host): ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``
  in the ``cpu`` hierarchy (v1's form of v2's ``cpu.max``), usage from ``cpuacct.usage``
  and throttling from ``cpu.stat`` of a group of the same name in the ``cpuacct``
  hierarchy (which may be mounted apart from ``cpu``, as it is here);
- cgroup v2 (the QEMU guest, or a host with v2 controllers): ``cpu.max`` = "QUOTA PERIOD",
  usage from ``cpu.stat``'s ``usage_usec``.

The limit caps; ``cpu.shares`` / ``cpu.weight`` set how the group fares against the rest
of the machine while below its cap, so that other work on a shared host takes less from
a server's quota.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
V1_CPU = CGROUP_ROOT / "cpu"
V1_CPUACCT = CGROUP_ROOT / "cpuacct"
RMDIR_ATTEMPTS = 20


class CpuGroupError(RuntimeError):
    """The control group could not be made or used."""


def cgroup_version() -> int:
    """1 when the v1 cpu controller is mounted, 2 when the v2 root delegates ``cpu``."""
    if (V1_CPU / "cpu.cfs_quota_us").exists():
        return 1
    controllers = CGROUP_ROOT / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        return 2
    raise CpuGroupError("no cgroup cpu controller: neither v1 /sys/fs/cgroup/cpu nor v2 cpu.max")


@dataclass(frozen=True)
class CpuUsage:
    """Cumulative counters of a group, read together."""

    cpu_s: float
    throttled_periods: int
    periods: int


class CpuGroup:
    """One group, created by ``create()`` and removed by ``remove()`` (idempotent)."""

    def __init__(self, name: str, cpus: float, period_us: int = 20_000, shares: int = 4096):
        if not 0 < cpus <= os.cpu_count():
            raise ValueError(f"cpu limit {cpus} outside 0..{os.cpu_count()}")
        self.name = name
        self.cpus = cpus
        self.period_us = period_us
        self.quota_us = round(cpus * period_us)
        self.shares = shares
        self.version = cgroup_version()

    @property
    def cpu_dir(self) -> Path:
        """The directory with the limit (v1 ``cpu`` hierarchy, or the v2 group)."""
        return (V1_CPU if self.version == 1 else CGROUP_ROOT) / self.name

    @property
    def accounting_dir(self) -> Path:
        return (V1_CPUACCT if self.version == 1 else CGROUP_ROOT) / self.name

    def _dirs(self) -> list[Path]:
        return list(dict.fromkeys([self.cpu_dir, self.accounting_dir]))

    def describe(self) -> str:
        """The limit as written, for the report."""
        if self.version == 1:
            return f"cpu.cfs_quota_us={self.quota_us} cpu.cfs_period_us={self.period_us} cpu.shares={self.shares}"
        return f'cpu.max="{self.quota_us} {self.period_us}" cpu.weight={self._weight()}'

    def _weight(self) -> int:
        # v1 shares 2..262144 (default 1024) onto v2 weight 1..10000 (default 100).
        return max(1, min(10_000, round(self.shares * 100 / 1024)))

    def create(self) -> CpuGroup:
        self.remove()
        for directory in self._dirs():
            directory.mkdir()
        if self.version == 1:
            (self.cpu_dir / "cpu.cfs_period_us").write_text(str(self.period_us))
            (self.cpu_dir / "cpu.cfs_quota_us").write_text(str(self.quota_us))
            (self.cpu_dir / "cpu.shares").write_text(str(self.shares))
        else:
            (self.cpu_dir / "cpu.max").write_text(f"{self.quota_us} {self.period_us}")
            (self.cpu_dir / "cpu.weight").write_text(str(self._weight()))
        return self

    def add(self, pid: int) -> None:
        """Move ``pid`` and all its threads into the group."""
        for directory in self._dirs():
            try:
                (directory / "cgroup.procs").write_text(str(pid))
            except OSError as err:
                raise CpuGroupError(f"cannot move pid {pid} into {directory}: {err}") from err

    def pids(self) -> list[int]:
        procs = self.cpu_dir / "cgroup.procs"
        return [int(x) for x in procs.read_text().split()] if procs.exists() else []

    def usage(self) -> CpuUsage:
        stat = dict(line.split() for line in (self.cpu_dir / "cpu.stat").read_text().splitlines() if line.strip())
        if self.version == 1:
            cpu_s = int((self.accounting_dir / "cpuacct.usage").read_text()) / 1e9
        else:
            cpu_s = int(stat["usage_usec"]) / 1e6
        return CpuUsage(cpu_s, int(stat.get("nr_throttled", 0)), int(stat.get("nr_periods", 0)))

    def remove(self) -> None:
        """Move what is left to the root group, then delete the directories."""
        for directory in self._dirs():
            if not directory.exists():
                continue
            parent = directory.parent
            for pid in (directory / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):  # exited meanwhile
                    (parent / "cgroup.procs").write_text(pid)
            for _attempt in range(RMDIR_ATTEMPTS):
                try:
                    directory.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)  # a process that just left may still be accounted
            else:
                raise CpuGroupError(f"cannot remove {directory}")
