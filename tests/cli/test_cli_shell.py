"""The restricted shell `fulcrum-shell` (the appliance admin's login shell) against the real
API (gunicorn on loopback, its own database in the private PostgreSQL cluster; no lab).

It is run as sshd runs it: through a link named fulcrum-shell to the built `fulcrum`, with
`-c LINE` for `ssh admin@lb LINE`, with lines piped in for `ssh -T`, and on a terminal (a
pty, driven with pexpect) as `-fulcrum-shell` for an interactive login. HOME holds the
admin's signed-in configuration, as on the appliance.
"""

from __future__ import annotations

import json
import os
import subprocess

import pexpect
import pytest

from tests.harness.stack import REPO, Stack, build_agent

CLI = REPO / "agents" / "bin" / "fulcrum"

POOL = "name: api\nalgorithm: round-robin\n"
PROMPT = r"fulcrum(@[A-Za-z0-9-]+)?> "


@pytest.fixture(scope="module")
def stack():
    build_agent()  # make -C agents build: the CLI is one of its binaries
    with Stack(prefix="clishell") as stack:
        yield stack


@pytest.fixture(scope="module")
def admin(stack, tmp_path_factory):
    """The admin's home, signed in, and the login shell: a link named fulcrum-shell."""
    home = tmp_path_factory.mktemp("admin-home")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    subprocess.run(
        [str(CLI), "login", "--url", stack.url, "-u", "admin", "--password-stdin"],
        input=stack.admin_password + "\n",
        text=True,
        env=env,
        check=True,
        capture_output=True,
    )
    assert (home / ".config" / "fulcrum" / "config.yaml").exists()
    shell = home / "fulcrum-shell"
    shell.symlink_to(CLI)
    return env, shell


@pytest.fixture(scope="module")
def service(stack):
    """A pool and a virtual service for the shell to list, made through the API."""
    pool = stack.api.create("/api/v1/pools/", name="web", algorithm="round-robin")
    return stack.api.create(
        "/api/v1/virtual-services/", name="web", vip="198.51.100.10", port=80, protocol="http", default_pool=pool["id"]
    )


def run_shell(admin, *args, stdin=""):
    env, shell = admin
    return subprocess.run([str(shell), *args], input=stdin, capture_output=True, text=True, env=env, timeout=60)


def test_one_command_with_dash_c_reads_standard_input(admin, service):
    created = run_shell(admin, "-c", "pool create -f -", stdin=POOL)
    assert created.returncode == 0, created.stderr
    listed = run_shell(admin, "-c", "pool list -o json")
    assert listed.returncode == 0, listed.stderr
    assert sorted(p["name"] for p in json.loads(listed.stdout)) == ["api", "web"]
    assert run_shell(admin, "-c", "pool show nope").returncode == 3  # the command's own exit code


def test_piped_lines_run_until_exit(admin, stack, service):
    before = stack.api.get("/api/v1/pools/").json()["count"]
    result = run_shell(admin, stdin="vs list\nnope\nexit\npool delete api\n")
    assert result.returncode == 2  # the last command's: nope
    table = result.stdout.splitlines()
    assert table[0].split()[:2] == ["NAME", "VIP"] and table[1].split()[0] == "web", result.stdout
    assert '"nope" is not a fulcrum command' in result.stderr
    assert stack.api.get("/api/v1/pools/").json()["count"] == before  # nothing ran after exit


@pytest.mark.parametrize(
    "line",
    [
        "scp -t /tmp",
        "/usr/lib/openssh/sftp-server",
        "bash -c id",
        "vs list; id",
        "vs list | sh",
        "vs edit web",
        "backup export -f {tmp}/backup.json",
        "backup restore {tmp}/backup.json",
        "--config {tmp}/config.yaml vs list",
    ],
)
def test_what_could_leave_the_shell_is_refused(admin, service, tmp_path, line):
    result = run_shell(admin, "-c", line.format(tmp=tmp_path), stdin="x\n")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "restricted shell" in result.stderr
    assert "uid=" not in result.stdout
    assert list(tmp_path.iterdir()) == []


def test_interactive_login_on_a_terminal(admin, stack, service):
    env, shell = admin
    # sshd starts a login shell with "-" before its name
    term = pexpect.spawn(
        "bash", ["-c", f"exec -a -fulcrum-shell {shell}"], env=env, encoding="utf-8", timeout=30, dimensions=(30, 120)
    )
    try:
        term.expect(r"Fulcrum \S+ restricted shell on \S+\.")
        term.expect(rf"API {stack.url}, signed in as admin \(role admin\)\.")
        term.expect(PROMPT)
        term.sendline("vs list")
        term.expect(PROMPT)
        assert "198.51.100.10" in term.before
        # Ctrl-C drops the line being typed; the next line is whole
        term.send("pool sh")
        term.sendcontrol("c")
        term.expect(r"\^C")
        term.expect(PROMPT)
        term.sendline("whoami")
        term.expect(r"admin \(role admin\) at ")
        term.expect(PROMPT)
        # Ctrl-C ends a command that runs until interrupted, not the shell
        term.sendline("audit --follow --interval 1s")
        term.expect("ACTION")
        term.sendcontrol("c")
        term.expect(PROMPT)
        # Tab completes a command name
        term.send("vir\t")
        term.expect("virtual-service ")
        term.sendline("list -q")
        term.expect(r"\r\nweb\r\n")
        term.expect(PROMPT)
        term.sendline("bash -c id")
        term.expect('"bash" is not a fulcrum command')
        term.expect(PROMPT)
        assert "uid=" not in term.before
        term.sendcontrol("d")
        term.expect(pexpect.EOF)
    finally:
        term.close()
    assert term.exitstatus == 2  # the last command's: bash
