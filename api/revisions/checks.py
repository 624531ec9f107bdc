"""Check rendered files with the daemons themselves before anything is published.

Not part of the compiler because it runs a program; no Django imports, so the golden
tests use it too.
"""

import functools
import logging
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

HAPROXY = os.environ.get("FULCRUM_HAPROXY", "haproxy")
KEEPALIVED = os.environ.get("FULCRUM_KEEPALIVED", "keepalived")
NFT = os.environ.get("FULCRUM_NFT", "nft")
# The appliance's firewall baseline (appliance/firewall/baseline.nft): installed by the
# fulcrum-appliance package, or the repository's copy on a development machine.
FIREWALL_BASELINES = (
    os.environ.get("FULCRUM_FIREWALL_BASELINE", ""),
    "/usr/lib/fulcrum/firewall/baseline.nft",
    str(Path(__file__).resolve().parents[2] / "appliance" / "firewall" / "baseline.nft"),
)
CHECK_TIMEOUT_S = 30
# The rendered haproxy.cfg's server-state-file, in FULCRUM_RUN_DIR (agents/internal/haproxy).
SERVER_STATE_FILE = "server-state"
# nft needs CAP_NET_ADMIN even to check a script; a user namespace with its own network
# namespace gives an unprivileged API exactly that, over an empty ruleset of its own.
_OWN_NETNS = ("unshare", "--user", "--map-root-user", "--net", "--")


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    output: str
    # False when the check could not run here (its output says why); ok is then True.
    checked: bool = True


def _lay_out(files, scratch):
    for name, content in files.items():
        target = os.path.join(scratch, name)
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
        with open(target, "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)
        os.chmod(target, 0o700 if name.endswith(".sh") else 0o600)


def _run(argv, scratch, env=None):
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S, check=False)
    output = (proc.stdout + proc.stderr).replace(scratch, "<check>").strip()
    return CheckResult(proc.returncode == 0, output)


# keepalived's complaints about what exists on the node but not on the API host: its
# interfaces, and the track files its agent keeps under /run/fulcrum-agent/<node>/.
_NODE_LOCAL = re.compile(
    r"(interface \S+ (for .+ )?doesn't exist|tracked interface \S+ doesn't exist"
    r"|^Non-existent interface specified in configuration"
    r"|realpath\(\) error \d+ \((No such file or directory|Permission denied)\) for fulcrum_\w+"
    r"|track file fulcrum_\w+ not found, ignoring\.*)$"
)


def check_keepalived(files) -> CheckResult:
    """Run ``keepalived --config-test`` on a bundle's keepalived.conf.

    keepalived exits non-zero on warnings too (an unknown scheduler it replaces, a keyword
    it ignores), which is what we want: the file must mean exactly what it says. The one
    exception is an interface or a track file missing here, or out of the API's reach (an
    appliance that is a node too keeps its agent's track files where only root looks): the
    API host is not the node, whose agent runs the same test with its own, as root, before
    anything goes live. Its nftables script is check_nftables' business.
    """
    if "keepalived.conf" not in files:
        return CheckResult(True, "")
    if shutil.which(KEEPALIVED) is None:
        return CheckResult(False, f"{KEEPALIVED} is not installed on the API host; cannot check the configuration")
    with tempfile.TemporaryDirectory(prefix="fulcrum-check-") as scratch:
        _lay_out(files, scratch)
        result = _run([KEEPALIVED, "--config-test", "-f", os.path.join(scratch, "keepalived.conf")], scratch)
    if not result.ok and only_node_local(result.output):
        return CheckResult(True, result.output)
    return result


def complaints(output):
    """The lines of a check's output that are about the files: keepalived's about what
    only the node has (see above) are left out."""
    lines = (line.strip() for line in output.splitlines())
    return [line for line in lines if line and not _NODE_LOCAL.search(line)]


def only_node_local(output):
    """Whether keepalived's complaints are all about what only the node has (see above)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return bool(lines) and all(_NODE_LOCAL.search(line) for line in lines)


# One line of haproxy -c: "[ALERT]    (1234) : config : parsing [...] : ...".
_HAPROXY_LINE = re.compile(r"^\[(?P<level>[A-Z]+)\]\s+\(\d+\)\s+:\s+(?P<text>.*)$")


def haproxy_says(output):
    """What ``haproxy -c`` found, in its own words: its alerts and warnings, one per line,
    without its notices (its version, its path) or process IDs."""
    said = []
    for line in output.splitlines():
        found = _HAPROXY_LINE.match(line.strip())
        if not found:
            said.append(line.strip())
        elif found["level"] != "NOTICE":
            said.append(f"{found['level']}: {found['text']}")
    return "\n".join(line for line in said if line)


def check_haproxy(files) -> CheckResult:
    """Run ``haproxy -c`` on a bundle (``{"haproxy.cfg": ..., "haproxy.d/x": ...}``).

    The files are laid out as the node agent lays them out, in a scratch directory that
    ``FULCRUM_CONF_DIR`` names, so HAProxy opens every map, certificate and page it refers to.
    Not ``-q``: HAProxy 2.6 then says nothing at all about what it refused. The scratch
    directory is also ``FULCRUM_RUN_DIR``, with a server state file holding no server (the
    node agent's holds its servers' health), or 2.6 would warn that there is none.
    """
    if shutil.which(HAPROXY) is None:
        return CheckResult(False, f"{HAPROXY} is not installed on the API host; cannot check the configuration")
    with tempfile.TemporaryDirectory(prefix="fulcrum-check-") as scratch:
        _lay_out(files | {SERVER_STATE_FILE: "1\n"}, scratch)
        env = {**os.environ, "FULCRUM_RUN_DIR": scratch, "FULCRUM_CONF_DIR": scratch}
        result = _run([HAPROXY, "-c", "-f", os.path.join(scratch, "haproxy.cfg")], scratch, env)
    return CheckResult(result.ok, haproxy_says(result.output))


def _firewall_baseline():
    return next((p for p in FIREWALL_BASELINES if p and os.path.isfile(p)), None)


@functools.cache
def _own_netns_problem():
    """Why nft cannot run in a namespace of its own here ("" when it can); logged once."""
    problem = _find_own_netns_problem()
    if problem:
        logging.getLogger(__name__).warning("nftables scripts are not checked before publishing: %s", problem)
    return problem


def _find_own_netns_problem():
    if shutil.which(NFT) is None:
        return f"{NFT} is not installed on the API host"
    if shutil.which(_OWN_NETNS[0]) is None:
        return "unshare (util-linux) is not installed on the API host"
    try:
        proc = subprocess.run([*_OWN_NETNS, "true"], capture_output=True, text=True, timeout=CHECK_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"cannot create a user and network namespace: {err}"
    return "" if proc.returncode == 0 else f"cannot create a user and network namespace: {proc.stderr.strip()}"


def check_nftables(files) -> CheckResult:
    """Run ``nft --check`` on a bundle's nftables scripts, in an empty network namespace.

    ``firewall.nft`` fills the sets of the appliance's firewall baseline, so the baseline
    is loaded first (in the same check transaction); ``keepalived.d/fulcrum.nft`` makes
    its own table. Where nft or an unprivileged user namespace is not available (a
    container) the check does not run and says so: the node agent checks the scripts
    again, against the node's own ruleset, before loading them.
    """
    scripts = [name for name in ("firewall.nft", "keepalived.d/fulcrum.nft") if name in files]
    if not scripts:
        return CheckResult(True, "")
    problem = _own_netns_problem()
    baseline = _firewall_baseline() if "firewall.nft" in scripts else ""
    if baseline is None:
        problem = "the firewall baseline is not installed (FULCRUM_FIREWALL_BASELINE)"
    if problem:
        return CheckResult(True, f"nftables scripts not checked: {problem}", checked=False)
    with tempfile.TemporaryDirectory(prefix="fulcrum-check-") as scratch:
        _lay_out(files, scratch)
        base = [_without_includes(baseline, scratch)] if baseline else []
        others = [os.path.join(scratch, name) for name in scripts if name != "firewall.nft"]
        parts = _firewall_parts(files["firewall.nft"], scratch) if "firewall.nft" in scripts else [None]
        for index, part in enumerate(parts):
            main = os.path.join(scratch, f"check-{index}.nft")
            with open(main, "w") as f:
                paths = base + ([part] if part else []) + (others if index == 0 else [])
                f.writelines(f"include {_nft_string(p)}\n" for p in paths)
            result = _run([*_OWN_NETNS, NFT, "--check", "--file", main], scratch)
            if not result.ok:
                return result
        return result


# nft sizes its netlink socket for a whole transaction (SO_SNDBUFFORCE), which the check's user
# namespace may not: there a transaction of a few thousand set elements is refused ("Message
# too long") that the node, as root, loads. So a large firewall.nft is checked in transactions
# of CHECK_STATEMENTS "add element" statements (of compiler.firewall.ELEMENTS_PER_STATEMENT
# elements), each after the file's flushes: every element is checked against its set as the
# node will load it.
CHECK_STATEMENTS = 2  # 1,000 elements a transaction; 2,000 loaded in a user namespace here, 4,000 did not
_ADD_ELEMENT = re.compile(r"^add element .*?^\}\n", re.M | re.S)


def _firewall_parts(content, scratch):
    """firewall.nft as scripts to check one after the other: its flushes with each statement."""
    text = content.decode() if isinstance(content, bytes) else content
    statements = _ADD_ELEMENT.findall(text)
    if len(statements) <= CHECK_STATEMENTS:  # one transaction, as before: each check costs seconds under emulation
        return [os.path.join(scratch, "firewall.nft")]
    head = _ADD_ELEMENT.sub("", text)
    parts = []
    for index in range(0, len(statements), CHECK_STATEMENTS):
        path = os.path.join(scratch, f"firewall-{index}.nft")
        with open(path, "w") as f:
            f.write(head + "".join(statements[index : index + CHECK_STATEMENTS]))
        parts.append(path)
    return parts


def _without_includes(baseline, scratch):
    """A copy of the baseline without its includes: the node's local additions (readable by
    root only, perhaps) change neither the table nor the sets firewall.nft fills."""
    with open(baseline) as f:
        lines = [line for line in f if not line.lstrip().startswith("include ")]
    path = os.path.join(scratch, "baseline.nft")
    with open(path, "w") as f:
        f.writelines(lines)
    return path


def _nft_string(path):
    if '"' in path or "\n" in path:
        raise ValueError(f"cannot name {path!r} in an nftables include")
    return f'"{path}"'
