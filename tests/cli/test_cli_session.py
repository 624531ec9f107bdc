"""A scripted `fulcrum` CLI session against the real API (gunicorn on loopback, its own
database in the private PostgreSQL cluster; no lab, no agents).

The tests run in file order and share one session, as a person at a terminal would: sign
in, create objects from YAML, list, change, apply, drain, look at status and the audit log,
roll back, generate a certificate, change the IPVS sync, export a backup and restore it,
put a node in standby, delete, sign out. Each step checks the exit code the CLI documents and what it
printed (tables for people, JSON parsed as a script would).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import requests

from tests.harness.stack import REPO, Stack, build_agent, free_port

CLI = REPO / "agents" / "bin" / "fulcrum"

POOL = """\
name: web
algorithm: round-robin
description: front web servers
"""

MEMBERS = """\
# several YAML documents: one member each
pool: web
name: s1
address: 192.0.2.11
port: 80
---
pool: web
name: s2
address: 192.0.2.12
port: 80
weight: 3
"""

SERVICE = """\
{"name": "web", "vip": "198.51.100.10", "port": 80, "protocol": "http", "default_pool": "web"}
"""


class Session:
    """Runs the CLI binary with its own configuration folder, like one person's shell."""

    def __init__(self, url, home):
        self.url = url
        self.home = home
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"),
        }

    def __call__(self, *args, stdin="", env=None, check_code=None):
        result = subprocess.run(
            [str(CLI), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            timeout=60,
        )
        if check_code is not None:
            assert result.returncode == check_code, (args, result.returncode, result.stdout, result.stderr)
        return result

    def ok(self, *args, **kwargs):
        return self(*args, check_code=0, **kwargs).stdout

    def json(self, *args):
        return json.loads(self.ok(*args, "-o", "json"))

    @property
    def config(self):
        return self.home / "config" / "fulcrum" / "config.yaml"


@pytest.fixture(scope="module")
def stack():
    build_agent()  # make -C agents build: the CLI is one of its binaries
    with Stack(prefix="cli") as stack:
        yield stack


@pytest.fixture(scope="module")
def cli(stack, tmp_path_factory):
    return Session(stack.url, tmp_path_factory.mktemp("cli-home"))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-files")
    for name, text in {"pool.yaml": POOL, "members.yaml": MEMBERS, "service.json": SERVICE}.items():
        (folder / name).write_text(text)
    return folder


def test_login_with_the_password_on_stdin(cli, stack):
    out = cli.ok(
        "login", "--url", stack.url, "--username", "admin", "--password-stdin", stdin=stack.admin_password + "\n"
    )
    assert f"Signed in to {stack.url} as admin (role admin)." in out
    assert cli.config.stat().st_mode & 0o777 == 0o600
    assert "token: " in cli.config.read_text()
    assert cli.ok("whoami").startswith("admin (role admin)")


def test_a_wrong_password_is_refused(cli, stack, tmp_path):
    other = Session(stack.url, tmp_path)
    result = other("login", "--url", stack.url, "-u", "admin", "--password-stdin", stdin="wrong\n", check_code=6)
    assert "Wrong username or password" in result.stderr
    assert not other.config.exists()


def test_create_pool_members_and_service_from_yaml(cli, files):
    assert cli.ok("pool", "create", "-f", str(files / "pool.yaml")) == "Created pool web (id {}).\n".format(
        cli.json("pool", "show", "web")["id"]
    )
    out = cli.ok("member", "create", "-f", str(files / "members.yaml"))
    assert "Created member web/s1" in out and "Created member web/s2" in out
    out = cli.ok("virtual-service", "create", "-f", "-", stdin=SERVICE)  # JSON on stdin
    assert "Created virtual-service web" in out


def test_list_as_a_table_and_as_json(cli):
    lines = cli.ok("member", "list", "web").splitlines()
    assert lines[0].split() == ["POOL", "NAME", "ADDRESS", "PORT", "WEIGHT", "STATE", "BACKUP"]
    assert [line.split() for line in lines[1:]] == [
        ["web", "s1", "192.0.2.11", "80", "1", "enabled", "no"],
        ["web", "s2", "192.0.2.12", "80", "3", "enabled", "no"],
    ]
    # Columns are aligned: every row's ADDRESS starts where the header's does.
    column = lines[0].index("ADDRESS")
    assert all(line[column:].startswith("192.0.2.") for line in lines[1:])
    members = cli.json("member", "list")
    assert {m["name"]: m["weight"] for m in members} == {"s1": 1, "s2": 3}
    pool = cli.json("pool", "show", "web")
    assert all(m["pool"] == pool["id"] for m in members)
    service = cli.json("vs", "show", "web")
    assert service["default_pool"] == pool["id"] and service["vip"] == "198.51.100.10"
    assert cli.ok("pool", "list", "-q") == "web\n"
    assert "vip: 198.51.100.10" in cli.ok("vs", "show", "web", "-o", "yaml")


def test_update_with_a_stale_version_is_a_conflict(cli, tmp_path):
    read = cli.ok("pool", "show", "web", "-o", "yaml")  # a person reads the pool...
    cli.ok("pool", "update", "web", "--set", "description=changed meanwhile")  # ...someone else changes it
    edited = tmp_path / "web.yaml"
    edited.write_text(read.replace("front web servers", "my edit"))
    result = cli("pool", "update", "web", "-f", str(edited), check_code=4)
    assert "409" in result.stderr and "current version" in result.stderr
    assert cli.json("pool", "show", "web")["description"] == "changed meanwhile"
    version = cli.json("pool", "show", "web")["version"]
    cli("pool", "update", "web", "--set", "description=x", "--if-version", str(version - 1), check_code=4)
    assert cli.ok("pool", "update", "web", "--set", "description=front web servers").startswith("Updated pool web")


def test_bad_input_is_refused_with_the_field_message(cli):
    before = cli.json("member", "list")
    result = cli("member", "create", "web/s3", "--set", "address=not-an-address", "--set", "port=70000", check_code=5)
    lines = result.stderr.splitlines()
    assert lines[0] == "Error: 400 Bad Request"
    assert any(line.startswith("  address: ") for line in lines)
    assert any(line.startswith("  port: ") for line in lines)
    assert cli.json("member", "list") == before
    cli("member", "create", "nopool/s3", "--set", "address=192.0.2.13", "--set", "port=80", check_code=3)
    cli("pool", "show", "nothing", check_code=3)
    cli("pool", "create", "--set", "novalue", check_code=2)


RULES_CSV = """\
name,kind,values,pool,negate
api,path_prefix,/api/|/v2/,web,
not-admin,path_prefix,/admin/,web,true
"""

RULES_YAML = """\
- name: not-admin
  action: deny
  conditions: [{kind: path_prefix, values: [/admin/]}]
"""


def test_import_rules_from_csv_and_yaml(cli, tmp_path):
    (tmp_path / "rules.csv").write_text(RULES_CSV)
    out = cli.ok("rule", "import", "web", str(tmp_path / "rules.csv"))
    assert out == "Imported 2 rules into web: 2 created, 0 updated, 0 deleted; it has 2 rules.\n"
    rules = cli.json("rule", "list")
    assert [(r["name"], r["position"], r["action"], r["conditions"][0]["values"]) for r in rules] == [
        ("api", 0, "use_pool", ["/api/", "/v2/"]),
        ("not-admin", 1, "use_pool", ["/admin/"]),
    ]
    assert rules[1]["conditions"][0]["negate"] is True
    # One bad line refuses the file, named by its line in the file; nothing changes.
    (tmp_path / "bad.csv").write_text("name,kind,values,pool\nnew,path_prefix,/new/,web\nbroken,path_regex,(open,web\n")
    result = cli("rule", "import", "web", str(tmp_path / "bad.csv"), check_code=5)
    assert any(line.startswith("  line 3.conditions: ") for line in result.stderr.splitlines()), result.stderr
    assert cli.json("rule", "list") == rules
    # --replace, from YAML on standard input: the file's rules become the service's.
    out = cli.ok("rule", "import", "web", "-", "--replace", stdin=RULES_YAML)
    assert out == "Imported 1 rules into web: 0 created, 1 updated, 1 deleted; it has 1 rules.\n"
    assert [(r["name"], r["action"]) for r in cli.json("rule", "list")] == [("not-admin", "deny")]
    assert cli.ok("rule", "delete-many", "web", "not-admin") == "Deleted 1 rules from web; it has 0 rules.\n"
    assert cli.json("rule", "list") == []


MEMBERS_CSV = """\
name,address,port,weight,state
f1,192.0.2.21,8080,2,
f2,192.0.2.22,8080,,drain
f3,2001:db8::23,8080,1,enabled
"""


def test_import_members_from_csv_and_yaml(cli, tmp_path):
    cli.ok("pool", "create", "--set", "name=farm")
    (tmp_path / "farm.csv").write_text(MEMBERS_CSV)
    out = cli.ok("member", "import", "farm", str(tmp_path / "farm.csv"))
    assert out == "Imported 3 members into farm: 3 created, 0 updated, 0 deleted; it has 3 members.\n"
    members = cli.json("member", "list", "farm")
    assert [(m["name"], m["address"], m["port"], m["weight"], m["state"]) for m in members] == [
        ("f1", "192.0.2.21", 8080, 2, "enabled"),
        ("f2", "192.0.2.22", 8080, 1, "drain"),
        ("f3", "2001:db8::23", 8080, 1, "enabled"),
    ]
    # One bad line refuses the file, named by its line; a cell of the wrong type stops it here.
    (tmp_path / "bad.csv").write_text("name,address,port\nf4,192.0.2.24,8080\nf5,192.0.2.25,70000\n")
    result = cli("member", "import", "farm", str(tmp_path / "bad.csv"), check_code=5)
    assert any(line.startswith("  line 3.port: ") for line in result.stderr.splitlines()), result.stderr
    (tmp_path / "typo.csv").write_text("name,address,port,backup\nf4,192.0.2.24,8080,maybe\n")
    result = cli("member", "import", "farm", str(tmp_path / "typo.csv"), check_code=2)
    assert 'line 2: backup: "maybe" is not true or false' in result.stderr
    assert cli.json("member", "list", "farm") == members
    # delete-many: a name the pool lacks refuses them all, named; no name is a usage error.
    result = cli("member", "delete-many", "farm", "f3", "f9", check_code=5)
    assert "farm has no member named f9" in result.stderr, result.stderr
    assert cli.json("member", "list", "farm") == members
    cli("member", "delete-many", "farm", check_code=2)
    out = cli.ok("member", "delete-many", "farm", "--from", "-", stdin="# retired\nf3\n\n")
    assert out == "Deleted 1 members from farm; it has 2 members.\n"
    assert [m["name"] for m in cli.json("member", "list", "farm")] == ["f1", "f2"]
    # --replace, from YAML on standard input: f1 keeps its id and takes the new weight.
    out = cli.ok(
        "member", "import", "farm", "-", "--replace", stdin="[{name: f1, address: 192.0.2.21, port: 8080, weight: 9}]"
    )
    assert out == "Imported 1 members into farm: 0 created, 1 updated, 1 deleted; it has 1 members.\n"
    [f1] = cli.json("member", "list", "farm")
    assert (f1["id"], f1["weight"]) == (members[0]["id"], 9)
    cli.ok("pool", "delete", "farm")


def test_apply_then_diff_and_pending(cli):
    assert cli.ok("pending").startswith("Not applied yet")
    out = cli.ok("apply", "-m", "web service")
    assert out.startswith("Revision ") and '"web service"' in out
    number = int(out.split()[1])
    assert cli.ok("pending").startswith(f"Nothing to apply: the objects are as in revision {number}.")
    diff = cli.ok("diff")
    assert f"Revision {number} since " in diff
    assert "+ pools/web" in diff and "+ virtual-services/web" in diff
    data = cli.json("diff", str(number))
    assert data["to_revision"] == number
    assert {o["path"] for o in data["objects"]} >= {"pools/web", "virtual-services/web"}
    revisions = cli.json("revisions")
    assert revisions[0]["number"] == number and revisions[0]["message"] == "web service"


def test_drain_a_member_and_see_it_in_status(cli):
    out = cli.ok("member", "drain", "web/s1")
    assert out.startswith("Member web/s1: state drain")
    assert cli.json("member", "show", "web/s1")["state"] == "drain"
    status = cli.ok("status")
    assert "NODES (newest revision:" in status
    assert "198.51.100.10:80" in status
    health = status.split("HEALTH", 1)[1]
    assert "web/s1" in health and "drain" in health and "web/s2" not in health
    data = cli.json("status")
    assert data["health"] == [{"pool": "web", "member": "s1", "state": "drain", "reason": "set by an operator"}]
    assert data["vips"][0]["address"] == "198.51.100.10:80"
    diff = cli.ok("diff")
    assert 'members/s1/state: "enabled" -> "drain"' in diff


def test_audit_tail_and_follow(cli):
    entries = cli.json("audit", "-n", "50")
    actions = {(e["action"], e["object_type"], e["object_name"]) for e in entries}
    assert ("create", "pool", "web") in actions
    tail = cli.ok("audit", "--object-type", "member", "-n", "5").splitlines()
    assert tail[0].split()[:3] == ["TIME", "ACTOR", "ACTION"]
    assert "member/web/s1" in tail[-1] and "runtime" in tail[-1]  # the newest entry is last
    follow = subprocess.Popen(
        [str(CLI), "audit", "--follow", "--interval", "200ms", "-n", "1", "--object-type", "pool"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli.env,
    )
    try:
        time.sleep(1)
        cli.ok("pool", "update", "web", "--set", "description=followed")
        deadline = time.monotonic() + 15
        seen = []
        while time.monotonic() < deadline:
            line = follow.stdout.readline()
            seen.append(line)
            if "update" in line and "pool/web" in line and "200" in line:
                break
        else:
            pytest.fail(f"audit --follow did not print the update: {seen}")
    finally:
        follow.send_signal(signal.SIGINT)
        assert follow.wait(timeout=10) == 0, follow.stderr.read()


def test_rollback_restores_the_objects(cli):
    revisions = cli.json("revisions")
    applied = next(r for r in revisions if r["message"] == "web service")
    out = cli.ok("rollback", str(applied["number"]), "-m", "undo the drain")
    assert out.startswith(f"Rolled back to revision {applied['number']} as revision ")
    assert cli.json("member", "show", "web/s1")["state"] == "enabled"
    assert cli.json("revisions")[0]["message"] == "undo the drain"
    cli("rollback", "999", check_code=3)


def test_apply_with_confirm_then_confirm(cli):
    cli.ok("member", "update", "web/s2", "--set", "weight=4")
    out = cli.ok("apply", "-m", "risky", "--confirm", "5m")
    number = int(out.split()[1])
    assert f"fulcrum confirm {number}" in out
    assert cli.ok("confirm") == f"Revision {number} confirmed.\n"
    cli("confirm", str(number), check_code=4)  # not awaiting any more


def test_apply_with_nothing_pending_publishes_nothing_unless_forced(cli):
    newest = cli.json("revisions")[0]["number"]
    assert cli.ok("pending").startswith(f"Nothing to apply: the objects are as in revision {newest}.")
    # Not an error for a script that applies whether or not it changed something.
    said = (
        f"nothing to apply: the configuration is the same as revision {newest} "
        "(nothing published; 'fulcrum apply --force' publishes it again)\n"
    )
    for args in (["apply", "-m", "again"], ["apply", "-o", "json", "--wait"], ["apply", "--confirm", "5m"]):
        result = cli(*args, check_code=0)
        assert (result.stdout, result.stderr) == ("", said), args
    assert cli.json("revisions")[0]["number"] == newest
    out = cli.ok("apply", "-m", "the same again", "--force")
    assert out.startswith(f'Revision {newest + 1} published: "the same again".\n')
    revisions = cli.json("revisions")
    assert [r["number"] for r in revisions[:2]] == [newest + 1, newest]
    assert revisions[0]["confirm_state"] == "none"


def test_generate_a_certificate(cli):
    out = cli.ok(
        "certificate", "generate", "site", "--common-name", "site.example", "--san", "site.example",
        "--san", "192.0.2.80", "--days", "30", "--key-type", "ecdsa-p256", "--description", "made by the CLI",
    )  # fmt: skip
    assert out.startswith("Created certificate site for ") and "site.example" in out and ", valid until " in out
    cert = cli.json("certificate", "show", "site")
    assert cert["has_key"] is True and cert["description"] == "made by the CLI"
    assert sorted(cert["sans"]) == ["192.0.2.80", "site.example"]
    assert cert["expires_in_days"] in (29, 30)
    assert "BEGIN CERTIFICATE" in cert["certificate"] and "private_key" not in cert
    row = next(line.split() for line in cli.ok("certificate", "list").splitlines() if line.startswith("site "))
    assert row[-2:] == ["yes", str(len(cert["warnings"]))]  # KEY, WARNINGS
    # Bad input changes nothing: a name taken, an unknown key type, no common name.
    result = cli("certificate", "generate", "site", "--common-name", "other.example", check_code=5)
    assert "name: " in result.stderr
    result = cli("certificate", "generate", "other", "--common-name", "o.example", "--key-type", "dsa", check_code=5)
    assert "key_type: " in result.stderr
    cli("certificate", "generate", "other", check_code=2)
    assert [c["name"] for c in cli.json("certificate", "list")] == ["site"]
    assert cli.json("certificate", "show", "site")["fingerprint"] == cert["fingerprint"]


def test_update_the_ipvs_sync_setting(cli):
    before = cli.json("ipvs-sync", "show")
    assert before["enabled"] is False
    out = cli.ok("ipvs-sync", "update", "--set", "enabled=true", "--set", "interface=eth1", "--set", "sync_id=7")
    assert out == f"Updated ipvs-sync (version {before['version'] + 1}).\n"
    after = cli.json("ipvs-sync", "show")
    assert (after["enabled"], after["interface"], after["sync_id"]) == (True, "eth1", 7)
    assert "interface: eth1" in cli.ok("ipvs-sync", "show")  # YAML for people
    result = cli("ipvs-sync", "update", "--set", "port=0", check_code=5)
    assert any(line.startswith("  port: ") for line in result.stderr.splitlines())
    result = cli("ipvs-sync", "update", "--set", "ttl=2", "--if-version", str(before["version"]), check_code=4)
    assert "current version" in result.stderr
    assert cli.json("ipvs-sync", "show") == after
    pending = cli.ok("pending")
    assert "+ ipvs-sync\n" in pending  # a sync that is off is not in a revision at all
    summary = cli.json("pending")["summary"]
    assert pending.endswith(f"objects: {summary['added']} added, {summary['changed']} changed, 0 removed.\n")
    assert summary["added"] >= 1


def test_backup_export_dry_run_and_restore(cli, tmp_path):
    path = tmp_path / "fulcrum-backup.json"
    out = cli.ok("backup", "export", "-f", str(path))
    assert out == f"Backup written to {path} (it holds private keys: keep it safe).\n"
    assert path.stat().st_mode & 0o777 == 0o600
    document = json.loads(path.read_text())
    assert document["format"] == "fulcrum-backup"
    objects = document["objects"]
    assert [p["name"] for p in objects["pools"]] == ["web"]
    assert "PRIVATE KEY" in next(c for c in objects["certificates"] if c["name"] == "site")["private_key"]
    assert objects["ipvs_sync"]["interface"] == "eth1"
    assert json.loads(cli.ok("backup", "export")) == document  # the same bytes on stdout

    s2, site = cli.json("member", "show", "web/s2"), cli.json("certificate", "show", "site")
    cli.ok("member", "delete", "web/s2")
    cli.ok("certificate", "delete", "site")
    pending = cli.json("pending")

    out = cli.ok("backup", "restore", str(path), "--dry-run")
    assert out.startswith(f"Dry run: restoring {path} would change (nothing is changed):\n")
    assert "+ certificates/site\n" in out and "~ pools/web\n" in out
    assert 'members/s2/address: null -> "192.0.2.12"' in out
    result = cli.json("backup", "restore", str(path), "--dry-run")
    assert result["applied"] is False
    assert {c["path"]: c["change"] for c in result["changes"]} == {"certificates/site": "added", "pools/web": "changed"}
    cli("member", "show", "web/s2", check_code=3)  # the dry run changed nothing
    cli("certificate", "show", "site", check_code=3)
    assert cli.json("pending") == pending

    out = cli.ok("backup", "restore", str(path))
    assert out.startswith(f"Restored {path}:\n") and "+ certificates/site\n" in out
    assert out.endswith("Not applied yet: 'fulcrum pending' shows it, 'fulcrum apply' applies it.\n")
    restored = cli.json("member", "show", "web/s2")
    fields = ("address", "port", "weight", "state", "backup")
    assert {f: restored[f] for f in fields} == {f: s2[f] for f in fields}
    cert = cli.json("certificate", "show", "site")
    assert (cert["fingerprint"], cert["has_key"], cert["sans"]) == (site["fingerprint"], True, site["sans"])
    assert "  no object changed\n" in cli.ok("backup", "restore", str(path), "--dry-run")

    # A document that breaks a rule is refused with the object's path, and changes nothing.
    objects["pools"][0]["members"][0]["port"] = 70000
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document))
    result = cli("backup", "restore", str(broken), check_code=5)
    assert "pools/web/members/s1" in result.stderr
    assert cli.json("member", "show", "web/s1")["port"] == 80


def test_node_standby(cli):
    # The session's API runs no agent: the node exists in the API only, so the standby
    # call is checked by its answers, not by VRRP.
    out = cli.ok("node", "create", "lb1", "--set", "address=192.0.2.201")
    assert out.startswith("Created node lb1 (id ") and "Token (shown only now, keep it safe): " in out
    result = cli("node", "standby", "lb1", check_code=4)
    assert "nodes/lb1: not in the live configuration yet; apply first" in result.stderr
    assert cli.json("node", "show", "lb1")["standby"] is False
    out = cli.ok("apply", "-m", "with lb1")
    number = int(out.split()[1])
    assert out.splitlines()[1].split() == ["lb1", "pending"]  # no agent has applied it
    assert cli.ok("node", "standby", "lb1") == f"Node lb1 is in standby (revision {number + 1}).\n"
    assert cli.json("node", "show", "lb1")["standby"] is True
    row = next(line.split() for line in cli.ok("node", "list").splitlines() if line.startswith("lb1 "))
    assert row[-2] == "yes"  # STANDBY
    data = cli.json("node", "standby", "lb1", "--off")
    assert data["revision"] == number + 2 and data["node"]["standby"] is False
    assert cli.json("revisions")[0]["message"] == "runtime: node lb1 back in service"
    assert cli.ok("pending").startswith(f"Nothing to apply: the objects are as in revision {number + 2}.")
    cli("node", "standby", "lb9", check_code=3)


def test_node_switchover_is_refused_without_a_management_vip(cli):
    # The session's API is a single appliance's: nothing to hand over, said plainly (409). The
    # image tier (tests/vm/image/test_join.py) switches a real pair over with this command.
    result = cli("node", "switchover", check_code=4)
    assert "no management VIP service" in result.stderr, result.stderr
    assert cli.json("audit", "--action", "cluster-switchover")[0]["status"] == 409


def test_join_code_create_join_list_and_revoke(cli, stack):
    out = cli.ok("join-code", "create")
    code = out.splitlines()[1].rsplit(" ", 1)[1]
    assert out.startswith(f"Created join-code {code[:4]} (id ") and "Join code (shown only now; it works once" in out
    # The new appliance's side, as its first boot does it: the code, its name, address, version and clock.
    body = {"join_code": code, "name": "lb2", "address": "192.0.2.202", "version": "dev",
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}  # fmt: skip
    answer = requests.post(f"{stack.url}/api/v1/cluster/join/", json=body, timeout=30)
    assert answer.status_code == 201, answer.text
    assert cli.json("node", "show", "lb2")["address"] == "192.0.2.202"
    [used] = cli.json("join-code", "list")
    assert (used["code_id"], used["state"], used["node"]) == (code[:4], "used", "lb2")
    spare = cli.ok("join-code", "create", "-q").strip()
    assert cli.ok("join-code", "delete", spare[:4]) == f"Deleted join-code {spare[:4]}.\n"
    assert [c["code_id"] for c in cli.json("join-code", "list")] == [code[:4]]
    cli.ok("node", "delete", "lb2")


def test_a_viewer_may_read_but_not_change(cli, stack, tmp_path):
    cli.ok("user", "create", "vera", "--set", "role=viewer", "--set", "password=correct horse battery")
    viewer = Session(stack.url, tmp_path)
    viewer.ok("login", "--url", stack.url, "-u", "vera", "--password-stdin", stdin="correct horse battery\n")
    assert viewer.ok("pool", "list", "-q") == "web\n"
    result = viewer("pool", "update", "web", "--set", "description=nope", check_code=6)
    assert "403" in result.stderr
    viewer.ok("logout")


def test_delete_in_use_then_in_order(cli):
    cli("pool", "delete", "web", check_code=4)  # the service still uses it
    cli.ok("virtual-service", "delete", "web")
    out = cli.ok("member", "delete", "web/s1", "web/s2")
    assert out == "Deleted member web/s1.\nDeleted member web/s2.\n"
    cli.ok("pool", "delete", "web")
    assert cli.json("pool", "list") == []


def test_logout_revokes_the_token(cli):
    token = next(line.split()[1] for line in cli.config.read_text().splitlines() if line.startswith("token:"))
    assert "the token is revoked" in cli.ok("logout")
    result = cli("pool", "list", check_code=6)
    assert "not signed in" in result.stderr
    result = cli("pool", "list", env={"FULCRUM_TOKEN": token}, check_code=6)  # revoked, not only forgotten
    assert "401" in result.stderr


def test_unreachable_api(cli):
    closed = f"http://127.0.0.1:{free_port()}"
    result = cli("--url", closed, "--token", "x", "pool", "list", check_code=8)
    assert "cannot reach the API" in result.stderr


def test_usage_errors(cli):
    cli("pool", "lst", check_code=2)
    cli("-o", "xml", "pool", "list", check_code=2)
    cli("rollback", check_code=2)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts(cli, shell, tmp_path):
    script = cli.ok("completion", shell)
    assert "fulcrum" in script
    if shell == "bash":
        path = Path(tmp_path / "fulcrum.bash")
        path.write_text(script)
        subprocess.run(["bash", "-n", str(path)], check=True)
        # Loaded in a shell, it registers the completion function for fulcrum.
        out = subprocess.run(
            ["bash", "-c", f"source {path} && complete -p fulcrum"], capture_output=True, text=True, check=True
        ).stdout
        assert "__start_fulcrum" in out
