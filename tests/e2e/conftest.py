"""What the console specs in webui/e2e/ talk to: one stack for the whole tier (PostgreSQL, the API
serving the built console, an agent and HAProxy in a lab), and a way to run one spec against it."""

import os
import subprocess
from pathlib import Path

import pytest

from tests.harness.lab import Lab
from tests.harness.stack import Stack

REPO = Path(__file__).resolve().parents[2]
WEBUI = REPO / "webui"
VIP = "10.77.100.10"


@pytest.fixture(scope="session")
def stack():
    if os.geteuid() != 0:
        pytest.fail("the browser tier needs root (network namespaces for the lab)")
    built = WEBUI / "dist" / "index.html"
    if not built.exists():
        pytest.fail("the console is not built: run `make build`")
    newer = [p for p in (WEBUI / "src").rglob("*") if p.is_file() and p.stat().st_mtime > built.stat().st_mtime]
    if newer:
        pytest.fail(f"the console build is older than {newer[0].relative_to(REPO)}: run `make build`")
    with Lab() as lab, Stack(lab) as stack:
        yield stack


@pytest.fixture(scope="session")
def playwright(stack):
    """Runs one spec of webui/e2e/ in Debian's Chromium against the stack; `env` adds variables."""

    def run(spec, **env):
        members = ",".join(f"{name}={address}:80" for name, address in stack.lab.servers.items())
        environ = {
            **os.environ,
            "FULCRUM_URL": stack.url,
            "FULCRUM_USER": "admin",
            "FULCRUM_PASSWORD": stack.admin_password,
            "FULCRUM_VIP": VIP,
            "FULCRUM_MEMBERS": members,
            "FULCRUM_NODE": stack.node,
            "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
            **env,
        }
        proc = subprocess.run(
            ["npx", "playwright", "test", f"e2e/{spec}", "--reporter=line"],
            cwd=WEBUI,
            env=environ,
            capture_output=True,
            text=True,
            timeout=600,
        )
        print(proc.stdout[-5000:], proc.stderr[-3000:])
        assert proc.returncode == 0, f"playwright {spec} failed:\n{proc.stdout[-5000:]}\n{proc.stderr[-3000:]}"

    return run
