"""README.md's "Using the API" block, run as it stands against the real API and agent: a README
command that fails as written is a defect (issue 20: a token name the API refused, the error
stored as the token, a pool ID written in). Only the address and the admin's password are
the stack's; then the new service must carry a request through its VIP."""

import os
import re
import subprocess

import pytest

from tests.harness.stack import REPO

pytestmark = pytest.mark.netns


def readme_block(heading):
    """The one ```sh block of README.md's section ``heading``."""
    section = (REPO / "README.md").read_text().split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    return block


def test_using_the_api_runs_as_written(stack, lab):
    script = readme_block("Using the API")
    assert "http://127.0.0.1:8000" in script and "<password>" in script
    script = script.replace("http://127.0.0.1:8000", stack.url).replace("<password>", stack.admin_password)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    revisions = stack.api.get("/api/v1/revisions/").json()["results"]
    (applied,) = [r for r in revisions if r["message"] == "add app"]
    assert stack.wait_for_node(applied["number"])["nodes"][0]["state"] == "applied"
    token = next(t for t in stack.api.get("/api/v1/tokens/").json()["results"] if t["name"] == "my-script")
    assert token["role"] == "admin", token
    status, body, _ = lab.client_get("http://10.77.100.20/")
    assert (status, body.strip()) == (200, "s1")  # app1 is 10.77.2.11, the lab's s1


def test_the_cli_lines_run_as_written(stack, tmp_path):
    """After the API block (its service "app" exists): the CLI signs in and lists it."""
    script = readme_block("The `fulcrum` CLI")
    password = stack.workdir / "admin.password"
    assert password.exists() and "http://127.0.0.1:8000" in script and ".state/demo/admin.password" in script
    script = script.replace("http://127.0.0.1:8000", stack.url).replace(".state/demo/admin.password", str(password))
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert re.search(r"^app\s", done.stdout, re.MULTILINE), done.stdout
    assert (tmp_path / "fulcrum" / "config.yaml").stat().st_mode & 0o077 == 0
