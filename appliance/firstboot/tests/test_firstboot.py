"""fulcrum-firstboot (appliance/firstboot/fulcrum-firstboot) on this host, under FULCRUM_ROOT:
real ssh-keygen and openssl; fakes first on PATH for fulcrum-api-init, fulcrum-manage and
systemctl, which record what they were asked (the real ones need the appliance)."""

import datetime
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

SCRIPT = Path(__file__).resolve().parents[1] / "fulcrum-firstboot"
NODE_TOKEN = "node_" + "n" * 40
CLI_TOKEN = "ful_" + "c" * 40

FAKE = """#!{python}
import json, os, sys
name, args = os.path.basename(sys.argv[0]), sys.argv[1:]
skip_sysv = ["SYSTEMCTL_SKIP_SYSV=" + os.environ["SYSTEMCTL_SKIP_SYSV"]] if "SYSTEMCTL_SKIP_SYSV" in os.environ else []
with open({log!r}, "a") as f:
    f.write(json.dumps([*skip_sysv, name, *args]) + "\\n")
if args[:1] == ["fulcrum_node"]:
    print({node!r})
elif args[:1] == ["fulcrum_token"]:
    print({cli!r})
"""


@pytest.fixture
def machine(tmp_path):
    root = tmp_path / "root"
    (root / "var/lib/fulcrum").mkdir(parents=True)
    (root / "var/lib/fulcrum/setup.done").write_text("done\n")
    (root / "etc/fulcrum").mkdir(parents=True)
    (root / "etc/fulcrum/management.env").write_text(
        "# Written by fulcrum-setup\nFULCRUM_MGMT_INTERFACE=ens3\nFULCRUM_MGMT_ADDRESS=10.0.2.15\n"
        "FULCRUM_MGMT_PREFIX=24\nFULCRUM_HOSTNAME=lb1.example.com\n"
    )
    bin_dir, log = tmp_path / "bin", tmp_path / "commands.log"
    bin_dir.mkdir()
    log.touch()
    for name in ("fulcrum-api-init", "fulcrum-manage", "systemctl"):
        (bin_dir / name).write_text(FAKE.format(python=sys.executable, log=str(log), node=NODE_TOKEN, cli=CLI_TOKEN))
        (bin_dir / name).chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FULCRUM_ROOT": str(root),
        "FULCRUM_ADMIN_USER": "root",
    }

    def firstboot():
        return subprocess.run([SCRIPT], env=env, capture_output=True, text=True, timeout=120)

    def commands():
        return [json.loads(line) for line in log.read_text().splitlines()]

    return root, firstboot, commands


def openssl(*args, stdin=None):
    return subprocess.run(["openssl", *args], capture_output=True, text=True, check=True, input=stdin).stdout


def test_first_boot_makes_keys_certificate_node_and_cli_token(machine):
    root, firstboot, commands = machine
    result = firstboot()
    assert result.returncode == 0, result.stderr

    for kind in ("ed25519", "rsa", "ecdsa"):
        key = root / f"etc/ssh/ssh_host_{kind}_key"
        assert stat.S_IMODE(key.stat().st_mode) == 0o600 and Path(f"{key}.pub").exists()

    crt, key = root / "etc/fulcrum/tls/console.crt", root / "etc/fulcrum/tls/console.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    text = openssl("x509", "-in", crt, "-noout", "-subject", "-ext", "subjectAltName,basicConstraints", "-enddate")
    assert "CN = lb1.example.com" in text
    assert "DNS:lb1.example.com, DNS:lb1, IP Address:10.0.2.15" in text
    assert "CA:FALSE" in text
    end = datetime.datetime.strptime(text.split("notAfter=")[1].strip(), "%b %d %H:%M:%S %Y %Z")
    assert abs((end - datetime.datetime.now(datetime.UTC).replace(tzinfo=None)).days - 3650) <= 1
    assert openssl("x509", "-in", crt, "-noout", "-pubkey") == openssl("pkey", "-in", key, "-pubout")
    assert "ASN1 OID: prime256v1" in openssl("pkey", "-in", key, "-noout", "-text")

    token = root / "etc/fulcrum/agent/node.token"
    assert token.read_text() == NODE_TOKEN + "\n"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600 and stat.S_IMODE(token.parent.stat().st_mode) == 0o700
    config = root / "root/.config/fulcrum/config.yaml"
    assert yaml.safe_load(config.read_text()) == {
        "url": "http://127.0.0.1:8000",
        "username": "admin",
        "token": CLI_TOKEN,
    }
    assert stat.S_IMODE(config.stat().st_mode) == 0o600 and stat.S_IMODE(config.parent.stat().st_mode) == 0o700
    assert (root / "var/lib/fulcrum/firstboot.done").exists()

    units = ["ssh.service", "nginx.service", "fulcrum-api.service", "fulcrum-agent.service"]
    assert commands() == [
        ["fulcrum-api-init", "--migrate"],
        ["fulcrum-manage", "fulcrum_node", "lb1", "--address", "10.0.2.15", "--token-file", "-"],
        ["fulcrum-manage", "fulcrum_token", "admin", "--name", "ssh-admin"],
        ["SYSTEMCTL_SKIP_SYSV=1", "systemctl", "enable", "--no-reload", *units],
        ["systemctl", "--no-block", "start", *units],
    ]


def test_a_joined_appliance_keeps_its_cluster_token_and_makes_no_local_admin_token(machine):
    root, firstboot, commands = machine
    (root / "etc/fulcrum/agent").mkdir(parents=True, mode=0o700)
    (root / "etc/fulcrum/agent/node.token").write_text("from-the-cluster\n")
    (root / "etc/fulcrum/cluster.env").write_text("FULCRUM_CLUSTER_JOINED=10.0.2.15\nFULCRUM_CLUSTER_NODE=lb1\n")
    result = firstboot()
    assert result.returncode == 0, result.stderr
    assert "joined a cluster" in result.stderr
    assert (root / "etc/fulcrum/agent/node.token").read_text() == "from-the-cluster\n"
    assert not (root / "root/.config/fulcrum/config.yaml").exists()
    assert not [c for c in commands() if c[1:2] in (["fulcrum_node"], ["fulcrum_token"])]
    assert (root / "var/lib/fulcrum/firstboot.done").exists()


def test_a_second_run_keeps_what_the_first_made(machine):
    root, firstboot, commands = machine
    assert firstboot().returncode == 0
    made = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and "firstboot.done" not in p.name}
    assert firstboot().returncode == 0
    assert {p: p.read_bytes() for p in made} == made
    assert [c[:2] for c in commands()].count(["fulcrum-manage", "fulcrum_node"]) == 1
    assert [c[:2] for c in commands()].count(["fulcrum-manage", "fulcrum_token"]) == 1


def test_a_lost_certificate_key_makes_a_new_pair(machine):
    root, firstboot, _ = machine
    assert firstboot().returncode == 0
    old = (root / "etc/fulcrum/tls/console.crt").read_text()
    (root / "etc/fulcrum/tls/console.key").unlink()
    assert firstboot().returncode == 0
    crt, key = root / "etc/fulcrum/tls/console.crt", root / "etc/fulcrum/tls/console.key"
    assert crt.read_text() != old
    assert openssl("x509", "-in", crt, "-noout", "-pubkey") == openssl("pkey", "-in", key, "-pubout")
    assert not list((root / "etc/fulcrum/tls").glob(".new-*"))


def test_without_setup_nothing_is_made(machine):
    root, firstboot, commands = machine
    (root / "var/lib/fulcrum/setup.done").unlink()
    result = firstboot()
    assert result.returncode == 1
    assert "the first-boot setup has not been completed" in result.stderr
    assert not (root / "etc/ssh").exists() and commands() == []


def test_the_console_certificate_names_the_management_vip(machine):
    root, firstboot, _commands = machine
    env_file = root / "etc/fulcrum/management.env"
    env_file.write_text(env_file.read_text() + "FULCRUM_MGMT_VIP=10.0.2.10\n")
    result = firstboot()
    assert result.returncode == 0, result.stderr
    text = openssl("x509", "-in", root / "etc/fulcrum/tls/console.crt", "-noout", "-ext", "subjectAltName")
    assert "DNS:lb1.example.com, DNS:lb1, IP Address:10.0.2.15, IP Address:10.0.2.10" in text


@pytest.mark.parametrize(
    "line",
    [
        "FULCRUM_HOSTNAME=lb1;reboot",
        "FULCRUM_HOSTNAME=lb1/CN=evil",
        "FULCRUM_MGMT_ADDRESS=10.0.2.15,DNS:evil",
        "FULCRUM_MGMT_VIP=10.0.2.10,DNS:evil",
    ],
)
def test_a_tampered_management_file_is_refused(machine, line):
    root, firstboot, commands = machine
    env_file = root / "etc/fulcrum/management.env"
    env_file.write_text(env_file.read_text() + line + "\n")
    result = firstboot()
    assert result.returncode == 1 and "is not a" in result.stderr
    assert not (root / "etc/fulcrum/tls").exists() and commands() == []
