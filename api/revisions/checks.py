"""Check rendered files with the daemons themselves before anything is published.

Not part of the compiler because it runs a program; no Django imports, so the golden
tests use it too.
"""

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

HAPROXY = os.environ.get("FULCRUM_HAPROXY", "haproxy")
KEEPALIVED = os.environ.get("FULCRUM_KEEPALIVED", "keepalived")
CHECK_TIMEOUT_S = 30


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    output: str


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
    r"|realpath\(\) error \d+ \(No such file or directory\) for \S+"
    r"|track file fulcrum_\w+ not found, ignoring\.*)$"
)


def check_keepalived(files) -> CheckResult:
    """Run ``keepalived --config-test`` on a bundle's keepalived.conf.

    keepalived exits non-zero on warnings too (an unknown scheduler it replaces, a keyword
    it ignores), which is what we want: the file must mean exactly what it says. The one
    exception is an interface or a track file missing here: the API host is not the node,
    whose agent runs the same test with its own before anything goes live. The nftables
    file needs CAP_NET_ADMIN to check, so the node agent checks it.
    """
    if "keepalived.conf" not in files:
        return CheckResult(True, "")
    if shutil.which(KEEPALIVED) is None:
        return CheckResult(False, f"{KEEPALIVED} is not installed on the API host; cannot check the configuration")
    with tempfile.TemporaryDirectory(prefix="fulcrum-check-") as scratch:
        _lay_out(files, scratch)
        result = _run([KEEPALIVED, "--config-test", "-f", os.path.join(scratch, "keepalived.conf")], scratch)
    lines = [line.strip() for line in result.output.splitlines() if line.strip()]
    if not result.ok and lines and all(_NODE_LOCAL.search(line) for line in lines):
        return CheckResult(True, result.output)
    return result


def check_haproxy(files) -> CheckResult:
    """Run ``haproxy -c`` on a bundle (``{"haproxy.cfg": ..., "haproxy.d/x": ...}``).

    The files are laid out as the node agent lays them out, in a scratch directory that
    ``FULCRUM_CONF_DIR`` names, so HAProxy opens every map, certificate and page it refers to.
    """
    if shutil.which(HAPROXY) is None:
        return CheckResult(False, f"{HAPROXY} is not installed on the API host; cannot check the configuration")
    with tempfile.TemporaryDirectory(prefix="fulcrum-check-") as scratch:
        _lay_out(files, scratch)
        env = {**os.environ, "FULCRUM_RUN_DIR": scratch, "FULCRUM_CONF_DIR": scratch}
        return _run([HAPROXY, "-c", "-q", "-f", os.path.join(scratch, "haproxy.cfg")], scratch, env)
