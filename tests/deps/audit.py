"""The dependency audit: is every program the host runs installed by the project's own scripts?

A program that a test, harness or host script runs (``tests.deps.commands``) must be

- listed in ``appliance/dev/packages.txt``, which ``appliance/dev/deps.sh`` installs from, or
- part of the base system: a file of a Debian package of priority ``required`` (or apt), what
  a minimal Debian 12 root (``mmdebstrap --variant=minbase``) holds, or
- one of the toolchains README asks for on the PATH (Go, Node.js with npm).

And each line of the manifest must be true of this host: the package, where installed, provides
what the line says (a program of that name in its files or its direct dependencies' files).

    python -m tests.deps.audit      # the problems, one a line; exit 1 if any
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.deps.commands import REPO, Use, host_uses

MANIFEST = REPO / "appliance" / "dev" / "packages.txt"
BASE_PRIORITIES = {"required"}
BASE_PACKAGES = {"apt"}  # minbase's one package beyond priority required
# README: "with Go >= 1.24 and Node.js >= 20.19 on the PATH"; deps.sh checks their versions.
TOOLCHAINS = {"go", "gofmt", "node", "npm", "npx"}
# Used only where present, on purpose.
WHERE_PRESENT = {"systemctl": "deps.sh stops Debian's own haproxy, nginx, ... units only where systemd runs"}
SEARCH_PATH = os.pathsep.join(
    [os.environ.get("PATH", ""), "/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/local/go/bin"]
)


@dataclass(frozen=True)
class Entry:
    """One line of the manifest."""

    group: str
    package: str
    provides: tuple[str, ...]
    line: int


def read_manifest(path: Path = MANIFEST) -> list[Entry]:
    entries = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if words:
            if len(words) < 3:
                raise ValueError(f"{path}:{number}: want 'group package provides...', got {line!r}")
            entries.append(Entry(words[0], words[1], tuple(words[2:]), number))
    return entries


def _dpkg_query(*args: str) -> str:
    return subprocess.run(["dpkg-query", *args], capture_output=True, text=True).stdout


@cache
def owner(path: str) -> str | None:
    """The package that installed ``path`` (either side of Debian 12's merged /usr)."""
    candidates = {path}
    for short, long in (("/bin/", "/usr/bin/"), ("/sbin/", "/usr/sbin/"), ("/lib/", "/usr/lib/")):
        if path.startswith(long):
            candidates.add(short + path[len(long) :])
        elif path.startswith(short):
            candidates.add(long + path[len(short) :])
    for candidate in sorted(candidates):
        out = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True).stdout
        for line in out.splitlines():
            package, _, owned = line.partition(": ")
            if owned == candidate and not package.startswith("diversion"):
                return package.split(":")[0].split(",")[0].strip()
    return None


@cache
def priority(package: str) -> str:
    return _dpkg_query("-W", "-f", "${Priority}", package).strip()


@cache
def installed(package: str) -> bool:
    return _dpkg_query("-W", "-f", "${db:Status-Status}", package).strip() == "installed"


@cache
def files_of(package: str, with_dependencies: bool = True) -> frozenset[str]:
    """The files of an installed package and, optionally, of its direct dependencies."""
    files = set(_dpkg_query("-L", package).splitlines())
    if with_dependencies:
        depends = _dpkg_query("-W", "-f", "${Depends},${Pre-Depends}", package)
        for alternatives in depends.split(","):
            name = alternatives.split("|")[0].split("(")[0].split(":")[0].strip()
            if name and installed(name):
                files |= files_of(name, with_dependencies=False)
    return frozenset(files)


def which(program: str) -> str | None:
    return (
        program if program.startswith("/") and os.access(program, os.X_OK) else shutil.which(program, path=SEARCH_PATH)
    )


def declared_items(entries: list[Entry]) -> set[str]:
    """What the manifest promises: program names, absolute files and their names."""
    items = {item for entry in entries for item in entry.provides}
    return items | {item.rsplit("/", 1)[-1] for item in items if item.startswith("/")}


def check_uses(uses: dict[str, list[Use]], entries: list[Entry]) -> list[str]:
    """The programs that nothing installs: one message each, with where they are used."""
    declared = declared_items(entries)
    problems = []
    for program, places in uses.items():
        name = program.rsplit("/", 1)[-1]
        if program in declared or name in declared or name in TOOLCHAINS or name in WHERE_PRESENT:
            continue
        where = ", ".join(map(str, places[:3])) + (f" and {len(places) - 3} more" if len(places) > 3 else "")
        path = which(program)
        if path is None:
            problems.append(f"{program} (run at {where}) is not installed, and no line of {MANIFEST.name} installs it")
            continue
        package = owner(os.path.realpath(path)) or owner(path)
        if package in BASE_PACKAGES or (package and priority(package) in BASE_PRIORITIES):
            continue
        origin = f"package {package}, priority {priority(package)}" if package else "no Debian package"
        problems.append(
            f"{program} (run at {where}) comes from {path} ({origin}): not part of the base system, "
            f"and no line of {MANIFEST.name} installs it"
        )
    return problems


def provided(item: str, package: str) -> bool:
    """Whether the installed package (or one of its direct dependencies) provides the item."""
    files = files_of(package)
    if item.startswith("module:"):
        module = item.removeprefix("module:").replace(".", "/")
        return any(f.endswith((f"/{module}/__init__.py", f"/{module}.py")) for f in files)
    if item.startswith("/"):
        return item in files or any(f.endswith(item.removeprefix("/usr")) for f in files if f.startswith("/"))
    if any(f.rsplit("/", 1)[-1] == item and ("/bin/" in f or "/sbin/" in f) for f in files):
        return True
    # An alternative (cc -> gcc-12's compiler): the file it resolves to is the package's.
    path = which(item)
    return path is not None and os.path.realpath(path) in files


def present(item: str) -> bool:
    """Whether the item is here, whoever provided it (deps.sh installs only what is missing)."""
    if item.startswith("module:"):
        module = item.removeprefix("module:")
        return subprocess.run(["python3", "-c", f"import {module}"], capture_output=True).returncode == 0
    return which(item) is not None if not item.startswith("/") else Path(item).exists()


def check_manifest(entries: list[Entry]) -> list[str]:
    """Each line true of this host: an installed package provides what its line says, and what
    an absent package would provide is here anyway (else deps.sh has not run)."""
    problems = []
    for entry in entries:
        where = f"{MANIFEST.name}:{entry.line}"
        for item in entry.provides:
            if installed(entry.package):
                if not provided(item, entry.package):
                    problems.append(f"{where}: the package {entry.package} does not provide {item}")
            elif not present(item):
                problems.append(f"{where}: {item} is missing and {entry.package} is not installed: run make deps-test")
    return problems


def main() -> int:
    entries = read_manifest()
    problems = check_manifest(entries) + check_uses(host_uses(), entries)
    print("\n".join(problems) or "deps audit: every program the host runs is installed by deps.sh or is base")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
