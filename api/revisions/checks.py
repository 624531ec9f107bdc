"""Check rendered files with the daemons themselves before anything is published.

Not part of the compiler because it runs a program; no Django imports, so the golden
tests use it too.
"""

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

HAPROXY = os.environ.get("FULCRUM_HAPROXY", "haproxy")
CHECK_TIMEOUT_S = 30


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    output: str


def check_haproxy(files) -> CheckResult:
    """Run ``haproxy -c`` on a bundle (``{"haproxy.cfg": ..., "haproxy.d/x": ...}``).

    The files are laid out as the node agent lays them out, in a scratch directory that
    ``FULCRUM_CONF_DIR`` names, so HAProxy opens every map, certificate and page it refers to.
    """
    if shutil.which(HAPROXY) is None:
        return CheckResult(False, f"{HAPROXY} is not installed on the API host; cannot check the configuration")
    with tempfile.TemporaryDirectory(prefix="fulcrum-check-") as scratch:
        for name, content in files.items():
            target = os.path.join(scratch, name)
            os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
            with open(target, "wb") as f:
                f.write(content.encode() if isinstance(content, str) else content)
            os.chmod(target, 0o700 if name.endswith(".sh") else 0o600)
        path = os.path.join(scratch, "haproxy.cfg")
        env = {**os.environ, "FULCRUM_RUN_DIR": scratch, "FULCRUM_CONF_DIR": scratch}
        proc = subprocess.run(
            [HAPROXY, "-c", "-q", "-f", path],
            env=env,
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT_S,
            check=False,
        )
    output = (proc.stdout + proc.stderr).replace(scratch, "<check>").strip()
    return CheckResult(proc.returncode == 0, output)
