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


def check_haproxy(config: bytes) -> CheckResult:
    """Run ``haproxy -c`` on ``config`` in a scratch directory."""
    if shutil.which(HAPROXY) is None:
        return CheckResult(False, f"{HAPROXY} is not installed on the API host; cannot check the configuration")
    with tempfile.TemporaryDirectory(prefix="fulcrum-check-") as scratch:
        path = os.path.join(scratch, "haproxy.cfg")
        with open(path, "wb") as f:
            f.write(config)
        env = {**os.environ, "FULCRUM_RUN_DIR": scratch}
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
