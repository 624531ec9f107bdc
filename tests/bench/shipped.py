"""The appliance's own daemons for the benchmark: HAProxy and nginx from a Debian 13 root.

The appliance runs Debian trixie's HAProxy 3.0 (OpenSSL 3.5) and nginx, not the build
host's. ``root()`` makes a minimal trixie root with ``mmdebstrap`` from the archives the
image is built from (``images/build.sh``: the same suite, mirrors and security updates),
holding only the daemons and OpenSSL. It is built once and cached under
``tests/bench/.cache/root-<key>``, where the key is a hash of what goes in (suite, sources,
packages). To pick up newer point releases, delete the folder.

``command(root, argv)`` runs ``argv`` from that root on the host's kernel: a private mount
namespace binds the host's temp folder (where the benchmark writes its configurations, at
the same paths), ``/dev`` and a ``/proc`` into the root, and ``chroot``s. The process keeps the
caller's network namespace and PID, so the lab's ``ip netns exec`` prefix and the CPU
accounting work unchanged. Nothing is mounted outside that namespace.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.bench.loads import BenchError

CACHE = Path(__file__).resolve().with_name(".cache")
SUITE = "trixie"
# As images/build.sh: the same variables choose the mirrors.
MIRROR = os.environ.get("FULCRUM_IMAGE_MIRROR", "http://deb.debian.org/debian")
SECURITY_MIRROR = os.environ.get("FULCRUM_IMAGE_SECURITY_MIRROR", "http://deb.debian.org/debian-security")
PACKAGES = ("haproxy", "nginx", "openssl")
BUILD_TIMEOUT_S = 900
# In the private mount namespace: $0 is the root, $1 the host's temp folder, the rest the command.
ENTER_ROOT = (
    'mkdir -p "$0$1" && mount --rbind "$1" "$0$1" && mount --rbind /dev "$0/dev" && mount -t proc proc "$0/proc" '
    '&& shift && exec chroot "$0" "$@"'
)


def sources() -> list[str]:
    lines = [f"deb {MIRROR} {SUITE} main", f"deb {MIRROR} {SUITE}-updates main"]
    if SECURITY_MIRROR:
        lines.append(f"deb {SECURITY_MIRROR} {SUITE}-security main")
    return lines


def cache_key() -> str:
    recipe = {"suite": SUITE, "sources": sources(), "packages": PACKAGES, "variant": "essential"}
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]


def root() -> Path:
    """The cached root, built first if missing (one build at a time; stale roots removed)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    target = CACHE / f"root-{cache_key()}"
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / ".complete").exists():
            _build(target)
        for stale in CACHE.glob("root-*"):
            if stale != target:
                shutil.rmtree(stale, ignore_errors=True)
    return target


def _build(target: Path) -> None:
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.rmtree(target, ignore_errors=True)
    argv = [
        "mmdebstrap",
        "--variant=essential",
        "--include=" + ",".join(PACKAGES),
        "--dpkgopt=path-exclude=/usr/share/doc/*",
        "--dpkgopt=path-exclude=/usr/share/man/*",
        SUITE,
        str(partial),
        *sources(),
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    if proc.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        raise BenchError(f"mmdebstrap of the {SUITE} daemons failed: {(proc.stdout + proc.stderr)[-2000:]}")
    (partial / ".complete").write_text(json.dumps({"sources": sources(), "packages": PACKAGES}) + "\n")
    partial.rename(target)


def command(root_dir: Path | None, argv: list[str]) -> list[str]:
    """``argv`` run from ``root_dir`` (None: the host's own programs)."""
    if root_dir is None:
        return argv
    temp = tempfile.gettempdir()
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", ENTER_ROOT, str(root_dir), temp, *argv]


@dataclass(frozen=True)
class Build:
    """What one daemon binary is: version, TLS library, default thread count."""

    daemon: str
    version: str
    tls_library: str
    default_threads: int | None = None

    def label(self) -> str:
        threads = f", {self.default_threads} threads by default" if self.default_threads else ""
        return f"{self.daemon} {self.version} ({self.tls_library}{threads})"


def describe(root_dir: Path | None, daemon: str) -> Build:
    """Ask the binary itself: ``haproxy -vv`` or ``nginx -V``."""
    argv = ["haproxy", "-vv"] if daemon == "haproxy" else ["nginx", "-V"]
    proc = subprocess.run(command(root_dir, argv), capture_output=True, text=True, timeout=30)
    text = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise BenchError(f"{' '.join(argv)} failed: {text[-500:]}")
    return parse_build(daemon, text)


def parse_build(daemon: str, text: str) -> Build:
    def first(pattern: str) -> str:
        match = re.search(pattern, text, re.MULTILINE)
        return match.group(1).strip() if match else "unknown"

    if daemon == "haproxy":
        threads = first(r"multi-threading support .*default=(\d+)")
        return Build(
            "HAProxy",
            first(r"^HAProxy version (\S+)"),
            first(r"^Running on OpenSSL version : (.+)$"),
            int(threads) if threads.isdigit() else None,
        )
    running = first(r"\(running with ([^)]+)\)")
    return Build(
        "nginx", first(r"nginx version: nginx/(\S+)"), running if running != "unknown" else first(r"built with (.+)")
    )
