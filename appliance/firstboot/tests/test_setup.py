"""fulcrum-setup (appliance/firstboot/fulcrum_setup.py) on this host: the prompts driven
through a pseudo-terminal (pexpect), seeded runs, two consoles at once, and what reaches the
files. The root is a temporary folder (--root) with a fake /sys/class/net; the system commands
(chpasswd, fulcrum-manage, fulcrum-api-init, systemctl, networkctl) are fakes first on PATH
that record their arguments and standard input, since the real ones would change this host."""

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pexpect
import pytest

from appliance.firstboot import fulcrum_setup as fs

SCRIPT = Path(fs.__file__)
PASSWORD = "Kestrel-Lantern-42"
REFUSED = "Refused-By-Django-1"  # the fake fulcrum-manage refuses it, as the API's validators would
MAC3, MAC4 = "52:54:00:f0:c0:01", "52:54:00:f0:c0:02"

FAKE_COMMAND = """#!{python}
import json, os, sys
data = sys.stdin.read() if not sys.stdin.isatty() else ""
with open({log!r}, "a") as f:
    f.write(json.dumps({{"argv": [os.path.basename(sys.argv[0]), *sys.argv[1:]], "stdin": data}}) + "\\n")
if os.path.basename(sys.argv[0]) == "systemctl" and sys.argv[1] == "is-active":
    sys.exit(3)  # systemd-networkd is not running yet at first boot
if "--password-stdin" in sys.argv and data.strip() == {refused!r}:
    print("CommandError: password refused: This password is too common.", file=sys.stderr)
    sys.exit(1)
if "fulcrum_join" in sys.argv:  # as cluster/management/commands/fulcrum_join.py answers
    if data.strip().upper() != {good_code!r}:
        print("CommandError: join refused: the cluster refused the join: Wrong join code.", file=sys.stderr)
        sys.exit(1)
    name = sys.argv[sys.argv.index("--name") + 1]
    vip = os.environ.get("FAKE_JOIN_VIP")  # the cluster's management VIP, if it has one
    print(json.dumps({{"node": name, "token": {token!r}, "version": "1.0", "certificate": {certificate!r},
                      "replication": {{"user": "fulcrum_replication", "password": {secret!r}, "port": 5432,
                                      "slot": name + "_2", "management_vip": vip,
                                      "console_key": {console_key!r} if vip else None}}}}))
"""
GOOD_CODE = "K7QM-W2XD-9HRT-5BNP-3CAZ"
TOKEN = "T" * 43
CERTIFICATE = "-----BEGIN CERTIFICATE-----\nMIIBcluster\n-----END CERTIFICATE-----\n"
REPLICATION_SECRET = "R" * 43
CONSOLE_KEY = "-----BEGIN PRIVATE KEY-----\nMIGHclusterkey\n-----END PRIVATE KEY-----\n"


@pytest.fixture
def root(tmp_path):
    """A root folder with lo, ens3, ens4 and a virtual veth0 (which the setup must not offer)."""
    root = tmp_path / "root"
    net = root / fs.SYS_NET
    for name, mac, kind in (("lo", "00:00:00:00:00:00", "772"), ("ens3", MAC3, "1"), ("ens4", MAC4, "1")):
        (net / name).mkdir(parents=True)
        (net / name / "address").write_text(mac + "\n")
        (net / name / "type").write_text(kind + "\n")
    virtual = root / "sys/devices/virtual/net/veth0"
    virtual.mkdir(parents=True)
    (virtual / "address").write_text("aa:bb:cc:dd:ee:ff\n")
    (net / "veth0").symlink_to(virtual)
    return root


@pytest.fixture
def commands(tmp_path):
    """Fake system commands first on PATH; returns a function reading what they were given."""
    bin_dir, log = tmp_path / "bin", tmp_path / "commands.log"
    bin_dir.mkdir()
    log.touch()
    for name in ("chpasswd", "fulcrum-manage", "fulcrum-api-init", "fulcrum-standby-init", "systemctl", "networkctl"):
        path = bin_dir / name
        path.write_text(FAKE_COMMAND.format(python=sys.executable, log=str(log), refused=REFUSED, good_code=GOOD_CODE,
                                            token=TOKEN, certificate=CERTIFICATE, secret=REPLICATION_SECRET,
                                            console_key=CONSOLE_KEY))  # fmt: skip
        path.chmod(0o755)

    def recorded():
        return [json.loads(line) for line in log.read_text().splitlines()]

    recorded.env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return recorded


def spawn(root, commands, *args):
    child = pexpect.spawn(
        sys.executable, [str(SCRIPT), "--root", str(root), *args], env=commands.env, encoding="utf-8", timeout=20
    )
    child.logfile_read = open(root.parent / f"console-{child.pid}.log", "w")  # noqa: SIM115
    return child


def run_seeded(root, commands, seed, *args):
    """The setup without a terminal (as systemd runs it when nobody is at a console)."""
    return subprocess.run(
        [sys.executable, SCRIPT, "--root", root, "--seed-dir", seed, *args],
        env=commands.env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def answer(child, expected, reply):
    child.expect_exact(expected)
    child.sendline(reply)


def answer_all(child, password, gateway=""):
    """The usual answers (first interface, 10.0.2.15/24, no DNS, lb1) up to the confirmation."""
    for prompt, reply in (
        ("interface", ""),
        ("address", "10.0.2.15/24"),
        ("gateway", gateway),
        ("DNS", ""),
        ("Hostname", "lb1"),
        ("Start a new cluster or join one?", ""),
        ("Management VIP", ""),
    ):
        answer(child, prompt, reply)
    answer(child, "Admin password (at least 10 characters): ", password)
    answer(child, "Admin password again: ", password)
    answer(child, "Apply these settings? [yes/no]: ", "yes")


def finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def write_seed(directory, text, keys=None):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "setup.conf").write_text(textwrap.dedent(text))
    if keys is not None:
        (directory / "root_authorized_keys").write_text(keys)
    return directory


def a_public_key(tmp_path, name="key"):
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "tester@host", "-f", tmp_path / name], check=True
    )
    return (tmp_path / f"{name}.pub").read_text().strip()


def every_written_file(root):
    return {p: p.read_text() for p in root.rglob("*") if p.is_file() and not p.is_relative_to(root / "sys")}


COMPLETE_SEED = """\
    # answers for an unattended first boot
    interface=ens4
    address=10.0.2.15/24
    gateway=10.0.2.2
    dns=10.0.2.3
    hostname=lb1.example.com
    admin_password=Kestrel-Lantern-42
"""


# -- typed answers ------------------------------------------------------------------------------


def test_typed_answers_are_checked_asked_again_and_applied(root, commands):
    child = spawn(root, commands)
    child.expect_exact(f"1) ens3             {MAC3}")
    child.expect_exact(f"2) ens4             {MAC4}")
    assert "veth0" not in child.before + child.after
    answer(child, "Management interface [ens3]: ", "eth9")
    answer(child, "Invalid: no interface 'eth9'; choose one of: ens3, ens4", "2")
    answer(child, "Management address", "10.0.2.15")
    answer(child, "Invalid: give the prefix length too", "10.0.2.0/24")
    answer(child, "Invalid: 10.0.2.0 is the network's own or broadcast address", "10.0.2.15/24")
    answer(child, "Default gateway (empty for none): ", "10.0.3.1")
    answer(child, "Invalid: 10.0.3.1 is outside the management subnet 10.0.2.0/24", "10.0.2.2")
    answer(child, "DNS servers (comma-separated, empty for none): ", "10.0.2.3, dns.example.com")
    answer(child, "Invalid: 'dns.example.com' is not an IP address", "10.0.2.3, 10.0.2.4")
    answer(child, "Hostname (e.g. lb1 or lb1.example.com): ", "-lb1")
    answer(child, "Invalid: '-lb1': each part is", "lb1.example.com")
    answer(child, "Start a new cluster or join one? (new/join) [new]: ", "both")
    answer(child, "Invalid: answer new (start a new cluster) or join", "new")
    answer(child, "Management VIP, an unused address the pair is managed at (empty for none): ", "10.0.2.2")
    answer(child, "Invalid: 10.0.2.2 is already used here (the gateway)", "10.0.3.10")
    answer(child, "Invalid: 10.0.3.10 is not a host address of the management subnet 10.0.2.0/24", "10.0.2.10/24")
    answer(child, "Invalid: '10.0.2.10/24' is not an IP address", "10.0.2.10")
    answer(child, "Admin password (at least 10 characters): ", "short")
    answer(child, "Invalid: at least 10 characters", PASSWORD)
    answer(child, "Admin password again: ", PASSWORD + "x")
    answer(child, "Invalid: the two passwords differ", PASSWORD)
    answer(child, "Admin password again: ", PASSWORD)
    child.expect_exact("Management interface  ens4 (52:54:00:f0:c0:02)")
    child.expect_exact("DNS servers           10.0.2.3, 10.0.2.4")
    child.expect_exact("Management VIP        10.0.2.10")
    answer(child, "Apply these settings? [yes/no]: ", "maybe")
    answer(child, "Please answer yes or no.", "yes")
    child.expect_exact("Setup is complete.")
    assert finish(child) == 0
    assert PASSWORD not in (root.parent / f"console-{child.pid}.log").read_text()  # never echoed

    assert (root / fs.NETWORK_FILE).read_text().split("[Match]", 1)[1] == textwrap.dedent(f"""
        MACAddress={MAC4}
        Type=ether

        [Network]
        Address=10.0.2.15/24
        Gateway=10.0.2.2
        IPv6AcceptRA=no
        LinkLocalAddressing=ipv6
        """)
    resolv = (root / fs.RESOLV_CONF).read_text()
    assert [line for line in resolv.splitlines() if not line.startswith("#")] == [
        "search example.com",
        "nameserver 10.0.2.3",
        "nameserver 10.0.2.4",
    ]
    assert (root / fs.HOSTNAME_FILE).read_text() == "lb1\n"
    assert "10.0.2.15\tlb1.example.com lb1\n" in (root / fs.HOSTS_FILE).read_text()
    # The console, SSH and the database on the management address and the management VIP.
    https, http = (root / fs.NGINX_LISTEN["https"]).read_text(), (root / fs.NGINX_LISTEN["http"]).read_text()
    assert https.splitlines()[-2:] == ["listen 10.0.2.15:443 ssl;", "listen 10.0.2.10:443 ssl;"]
    assert http.splitlines()[-2:] == ["listen 10.0.2.15:80;", "listen 10.0.2.10:80;"]
    firewall = (root / fs.MANAGEMENT_NFT).read_text().splitlines()
    assert firewall[-2:] == [
        "flush set inet fulcrum_firewall management4",
        "add element inet fulcrum_firewall management4 { 10.0.2.15, 10.0.2.10 }",
    ]
    # The agent uses the cluster's API at the VIP, pinned to this appliance's console certificate.
    api = [line for line in (root / fs.AGENT_API_ENV).read_text().splitlines() if not line.startswith("#")]
    assert api == ["FULCRUM_API=https://10.0.2.10", f"FULCRUM_API_PIN=/{fs.CONSOLE_CERT}"]
    env = dict(
        line.split("=", 1)
        for line in (root / fs.MANAGEMENT_ENV).read_text().splitlines()
        if "=" in line and not line.startswith("#")
    )
    assert env == {
        "FULCRUM_MGMT_INTERFACE": "ens4",
        "FULCRUM_MGMT_ADDRESS": "10.0.2.15",
        "FULCRUM_MGMT_PREFIX": "24",
        "FULCRUM_HOSTNAME": "lb1.example.com",
        "FULCRUM_MGMT_VIP": "10.0.2.10",
        "FULCRUM_MGMT_WITNESS": "10.0.2.2",
    }
    assert (root / fs.SETUP_DONE).exists()
    assert not (root / fs.ROOT_KEYS).exists()

    # The password went to chpasswd and to Django on standard input only, and into no file.
    ran = commands()
    assert [c["argv"] for c in ran] == [
        ["fulcrum-api-init"],
        ["fulcrum-manage", "migrate", "--no-input"],
        ["fulcrum-manage", "fulcrum_admin", "--password-stdin"],
        ["chpasswd"],
        ["systemctl", "is-active", "--quiet", "systemd-networkd.service"],
        ["systemctl", "reload", "fulcrum-firewall.service"],
    ]
    assert ran[2]["stdin"] == PASSWORD + "\n"
    assert ran[3]["stdin"] == f"admin:{PASSWORD}\n"
    assert not any(PASSWORD in arg for c in ran for arg in c["argv"])
    assert not any(PASSWORD in text for text in every_written_file(root).values())


def test_a_newline_semicolon_or_quote_never_reaches_a_file(root, commands):
    """Ctrl-V makes the terminal pass a carriage return inside an answer (a quoted newline
    would only end the line early: the rest becomes the next answer); every one is refused."""
    newline = "\x16\r"
    child = spawn(root, commands)
    answer(child, "Management interface [ens3]: ", f"ens3{newline}Name=*")
    answer(child, "Invalid: no interface", "")
    answer(child, "Management address", f"10.0.2.15/24{newline}Address=6.6.6.6/8")
    answer(child, "Invalid: not an address with a prefix length", '"10.0.2.15/24"')
    answer(child, "Invalid: not an address with a prefix length", "10.0.2.15/24")
    answer(child, "Default gateway", "10.0.2.2;")
    answer(child, "Invalid: '10.0.2.2;' is not an IP address", "10.0.2.2")
    answer(child, "DNS servers", f"10.0.2.3{newline}nameserver 6.6.6.6")
    answer(child, "Invalid:", "10.0.2.3")
    answer(child, "Hostname", f"lb1{newline}6.6.6.6 evil")
    answer(child, "Invalid:", "lb1;reboot")
    answer(child, "Invalid:", "lb1'")
    answer(child, "Invalid:", 'lb1"')
    answer(child, "Invalid:", "lb1 lb2")
    answer(child, "Invalid:", "lb1")
    answer(child, "Start a new cluster or join one?", "")
    answer(child, "Management VIP", f"10.0.2.10{newline}FULCRUM_API=https://6.6.6.6")
    answer(child, "Invalid:", "")
    # getpass reads the terminal with universal newlines: the carriage return ends the password.
    answer(child, "Admin password (at least 10 characters): ", f"{PASSWORD}{newline}junk")
    answer(child, "Admin password again: ", PASSWORD)
    answer(child, "Apply these settings? [yes/no]: ", "yes")
    child.expect_exact("Setup is complete.")
    assert finish(child) == 0
    written = every_written_file(root)
    for needle in ("6.6.6.6", "evil", "reboot", "lb1;", "lb1'", 'lb1"', "Name=*", "\r"):
        assert not any(needle in text for text in written.values()), needle
    clean = fs.Answers(
        interface=fs.Interface("ens3", MAC3),
        address=fs.parse_address("10.0.2.15/24"),
        gateway=fs.ipaddress.ip_address("10.0.2.2"),
        dns=[fs.ipaddress.ip_address("10.0.2.3")],
        hostname="lb1",
        management_vip="",
    )
    for relative, (content, _) in fs.render_files(clean).items():
        assert written[root / relative] == content, relative
    assert commands()[3]["stdin"] == f"admin:{PASSWORD}\n"


def test_no_at_the_summary_asks_again_with_the_answers_as_defaults(root, commands):
    child = spawn(root, commands)
    answer(child, "Management interface [ens3]: ", "")
    answer(child, "Management address", "2001:db8::10/64")
    answer(child, "Default gateway", "fe80::1")
    answer(child, "DNS servers", "2001:db8::53")
    answer(child, "Hostname", "lb1")
    answer(child, "Start a new cluster or join one?", "")
    answer(child, "Management VIP", "")
    answer(child, "Admin password (at least 10 characters): ", PASSWORD)
    answer(child, "Admin password again: ", PASSWORD)
    answer(child, "Apply these settings? [yes/no]: ", "no")
    answer(child, "Management interface [ens3]: ", "")
    answer(child, "Management address (CIDR, e.g. 192.0.2.10/24 or 2001:db8::10/64) [2001:db8::10/64]: ", "")
    answer(child, "Default gateway (empty for none) [fe80::1]: ", "")
    answer(child, "DNS servers (comma-separated, empty for none) [2001:db8::53]: ", "")
    answer(child, "Hostname (e.g. lb1 or lb1.example.com) [lb1]: ", "lb2")
    answer(child, "Start a new cluster or join one? (new/join) [new]: ", "")
    answer(child, "Management VIP, an unused address the pair is managed at (empty for none): ", "")
    answer(child, "Admin password (at least 10 characters): ", PASSWORD)
    answer(child, "Admin password again: ", PASSWORD)
    child.expect_exact("Hostname              lb2")
    answer(child, "Apply these settings? [yes/no]: ", "yes")
    assert finish(child) == 0
    network = (root / fs.NETWORK_FILE).read_text()
    assert "Address=2001:db8::10/64\nGateway=fe80::1\n" in network
    assert f"MACAddress={MAC3}" in network
    assert (root / fs.NGINX_LISTEN["https"]).read_text().splitlines()[-1] == "listen [2001:db8::10]:443 ssl;"
    assert (root / fs.MANAGEMENT_NFT).read_text().splitlines()[-1] == (
        "add element inet fulcrum_firewall management6 { 2001:db8::10 }"
    )
    assert (root / fs.HOSTNAME_FILE).read_text() == "lb2\n"
    assert "search" not in (root / fs.RESOLV_CONF).read_text()


def test_join_a_cluster_a_refused_code_is_asked_again(root, commands):
    child = spawn(root, commands)
    for prompt, reply in (("interface", ""), ("address", "10.0.2.16/24"), ("gateway", ""), ("DNS", ""),
                          ("Hostname", "lb2.example.com"), ("Start a new cluster or join one?", "join"),
                          ("An appliance of the cluster", "10.0.2.15:444x"),
                          ("Invalid: '444x' is not a port", "10.0.2.15"),
                          ("Join code", "K7QM;reboot"), ("Invalid: a join code is letters and digits", "AAAA-BBBB")):  # fmt: skip
        answer(child, prompt, reply)
    answer(child, "Admin password (at least 10 characters): ", PASSWORD)
    answer(child, "Admin password again: ", PASSWORD)
    child.expect_exact("Cluster               join the cluster of 10.0.2.15")
    child.expect_exact("Join code             (set)")
    answer(child, "Apply these settings? [yes/no]: ", "yes")
    child.expect_exact("The join was refused: the cluster refused the join: Wrong join code.")
    assert not (root / fs.SETUP_DONE).exists() and not (root / fs.NODE_TOKEN).exists()
    answer(child, "An appliance of the cluster (address or name) [10.0.2.15]: ", "")
    answer(child, "Join code (Nodes → Add an appliance on the cluster) [AAAA-BBBB]: ", GOOD_CODE.lower())
    child.expect_exact("Joined: this appliance is node lb2 of the cluster of 10.0.2.15.")
    child.expect_exact("Setup is complete.")
    assert finish(child) == 0

    ran = commands()
    joins = [c for c in ran if "fulcrum_join" in c["argv"]]
    assert [c["argv"] for c in joins] == [["fulcrum-manage", "fulcrum_join", "10.0.2.15", "--name", "lb2",
                                           "--address", "10.0.2.16"]] * 2  # fmt: skip
    assert [c["stdin"] for c in joins] == ["AAAA-BBBB\n", GOOD_CODE.lower() + "\n"]
    # The cluster's admins sign in to the console: no console password is set here.
    assert not any("fulcrum_admin" in c["argv"] for c in ran)
    # Applying again after a refusal repeats its steps, each of which can be repeated.
    assert {c["stdin"] for c in ran if c["argv"][0] == "chpasswd"} == {f"admin:{PASSWORD}\n"}
    assert (root / fs.NODE_TOKEN).read_text() == TOKEN + "\n"
    assert stat.S_IMODE((root / fs.NODE_TOKEN).stat().st_mode) == 0o600
    assert stat.S_IMODE((root / fs.NODE_TOKEN).parent.stat().st_mode) == 0o700
    assert (root / fs.CLUSTER_CERT).read_text() == CERTIFICATE
    api = [line for line in (root / fs.AGENT_API_ENV).read_text().splitlines() if not line.startswith("#")]
    assert api == ["FULCRUM_API=https://10.0.2.15", f"FULCRUM_API_PIN=/{fs.CLUSTER_CERT}"]
    assert "FULCRUM_CLUSTER_NODE=lb2" in (root / fs.CLUSTER_ENV).read_text()
    # Its database becomes a standby of the primary's, with the password and slot the join brought.
    assert (root / fs.REPLICATION_SECRET).read_text() == REPLICATION_SECRET + "\n"
    assert stat.S_IMODE((root / fs.REPLICATION_SECRET).stat().st_mode) == 0o640
    standby = [c["argv"] for c in ran if c["argv"][0] == "fulcrum-standby-init"]
    assert standby == [["fulcrum-standby-init", "10.0.2.15", "5432", "lb2_2", "lb2"]]
    assert ran.index(next(c for c in ran if c["argv"][0] == "fulcrum-standby-init")) > ran.index(joins[-1])
    for secret in (GOOD_CODE.lower(), PASSWORD):
        assert not any(secret in text for text in every_written_file(root).values())


def test_a_password_the_api_refuses_is_asked_again_before_anything_is_written(root, commands):
    child = spawn(root, commands)
    answer_all(child, REFUSED)
    child.expect_exact("The console refused the admin password: This password is too common.")
    child.expect_exact("Admin password (at least 10 characters): ")
    assert not (root / fs.NETWORK_FILE).exists() and not (root / fs.SETUP_DONE).exists()
    assert "chpasswd" not in [c["argv"][0] for c in commands()]
    child.sendline(PASSWORD)
    answer(child, "Admin password again: ", PASSWORD)
    child.expect_exact("Setup is complete.")
    assert finish(child) == 0
    assert [c["stdin"] for c in commands() if c["argv"][0] == "chpasswd"] == [f"admin:{PASSWORD}\n"]
    assert "Gateway=" not in (root / fs.NETWORK_FILE).read_text()


def test_the_console_that_finishes_first_applies_and_the_other_stops(root, commands):
    serial, vt = spawn(root, commands), spawn(root, commands)
    answer(vt, "Management interface [ens3]: ", "")
    answer(vt, "Management address", "10.9.9.9/24")  # the tty1 operator walks away here
    answer_all(serial, PASSWORD, gateway="10.0.2.2")
    serial.expect_exact("Setup is complete.")
    assert finish(serial) == 0
    vt.expect_exact("Setup was completed on another console.", timeout=5)
    assert finish(vt) == 0
    assert "Address=10.0.2.15/24" in (root / fs.NETWORK_FILE).read_text()
    assert [c["argv"][0] for c in commands()].count("chpasswd") == 1


def test_a_terminal_that_fails_leaves_the_setup_to_the_other_console(root, commands):
    """A serial port without a UART opens, then fails reads and writes with EIO: so does a
    pseudo-terminal whose other end is closed."""
    master, terminal = os.openpty()
    os.close(master)
    try:
        result = subprocess.run(
            [sys.executable, SCRIPT, "--root", root], env=commands.env,
            stdin=terminal, stdout=terminal, stderr=subprocess.PIPE, text=True, timeout=30,
        )  # fmt: skip
    finally:
        os.close(terminal)
    assert result.returncode == 0
    assert "does not answer (no serial port?); the setup runs on the other console" in result.stderr
    assert not (root / fs.SETUP_DONE).exists() and commands() == []


# -- seeds --------------------------------------------------------------------------------------


def test_a_complete_seed_runs_unattended(root, commands, tmp_path):
    key = a_public_key(tmp_path)
    keys = f"# the operator's key\n{key}\nssh-ed25519 AAAAnotakey root@x\nssh-rsa {key.split()[1]} type-and-blob-disagree\n"
    seed = write_seed(tmp_path / "seed", COMPLETE_SEED, keys)
    result = run_seeded(root, commands, seed)
    assert result.returncode == 0, result.stderr
    assert "root_authorized_keys line 3: not an SSH public key, ignored" in result.stdout
    assert "root_authorized_keys line 4: not an SSH public key, ignored" in result.stdout
    assert "Setup is complete." in result.stdout
    assert f"MACAddress={MAC4}" in (root / fs.NETWORK_FILE).read_text()
    assert (root / fs.ROOT_KEYS).read_text() == key + "\n"
    assert stat.S_IMODE((root / fs.ROOT_KEYS).stat().st_mode) == 0o600
    assert stat.S_IMODE((root / fs.ROOT_KEYS).parent.stat().st_mode) == 0o700
    assert [c["stdin"] for c in commands() if c["argv"][0] == "chpasswd"] == [f"admin:{PASSWORD}\n"]
    assert (root / fs.SETUP_DONE).exists()


def test_seeded_answers_that_fail_their_checks_are_asked_for(root, commands, tmp_path):
    seed = write_seed(tmp_path / "seed", """\
        interface=ens3
        address=10.0.2.300/24
        gateway=10.0.2.2
        dns=10.0.2.3
        hostname=lb1;reboot
        colour=blue
    """)  # fmt: skip
    child = spawn(root, commands, "--seed-dir", str(seed))
    child.expect_exact("setup.conf line 6: unknown key 'colour', ignored")
    child.expect_exact("seed: address refused: not an address with a prefix length")
    child.expect_exact("seed: gateway not checked (the address was refused); asking for it.")
    child.expect_exact("seed: hostname refused: 'lb1;reboot': each part is")
    child.expect_exact("seed: no admin_password; asking for it.")
    answer(child, "Management address", "10.0.2.15/24")
    answer(child, "Default gateway", "10.0.2.2")
    answer(child, "Hostname", "lb1")
    answer(child, "Admin password (at least 10 characters): ", PASSWORD)
    answer(child, "Admin password again: ", PASSWORD)
    child.expect_exact("Management interface  ens3 (52:54:00:f0:c0:01)")
    child.expect_exact("DNS servers           10.0.2.3")
    answer(child, "Apply these settings? [yes/no]: ", "yes")
    assert finish(child) == 0
    assert "reboot" not in (root / fs.HOSTS_FILE).read_text()
    assert "nameserver 10.0.2.3" in (root / fs.RESOLV_CONF).read_text()


def test_a_seed_with_only_root_keys_asks_everything_and_installs_the_keys(root, commands, tmp_path):
    key = a_public_key(tmp_path)
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "root_authorized_keys").write_text(key + "\n")
    child = spawn(root, commands, "--seed-dir", str(seed))
    child.expect_exact("It holds no setup answers (setup.conf); asking for them.")
    answer_all(child, PASSWORD)
    child.expect_exact("Setup is complete.")
    assert finish(child) == 0
    assert (root / fs.ROOT_KEYS).read_text() == key + "\n"


def test_a_seed_joins_unattended_and_a_refused_join_stops_it(root, commands, tmp_path):
    seed_text = COMPLETE_SEED + "    cluster=join\n    join_address=[2001:db8::15]:8443\n    join_code={code}\n"
    out = {}
    for code, status in (("AAAA-BBBB", 1), (GOOD_CODE, 0)):
        seed = write_seed(tmp_path / f"seed-{status}", seed_text.format(code=code))
        result = run_seeded(root, commands, seed)
        assert result.returncode == status, result.stdout + result.stderr
        assert (root / fs.SETUP_DONE).exists() == (status == 0)
        out[status] = result.stdout
    assert "The join was refused: the cluster refused the join: Wrong join code." in out[1]
    assert "Joined: this appliance is node lb1 of the cluster of [2001:db8::15]:8443." in out[0]
    assert "FULCRUM_API=https://[2001:db8::15]:8443" in (root / fs.AGENT_API_ENV).read_text()


def test_joining_a_cluster_with_a_management_vip_takes_its_vip_and_console(root, commands, tmp_path):
    seed = write_seed(tmp_path / "seed", COMPLETE_SEED.replace("10.0.2.15/24", "10.0.2.16/24").replace("lb1", "lb2")
                      + "    cluster=join\n    join_address=10.0.2.15\n" + f"    join_code={GOOD_CODE}\n")  # fmt: skip
    commands.env["FAKE_JOIN_VIP"] = "10.0.2.10"
    result = run_seeded(root, commands, seed)
    assert result.returncode == 0, result.stdout + result.stderr
    # The cluster's console: its certificate and key, served here once this appliance holds the VIP.
    assert (root / fs.CONSOLE_CERT).read_text() == CERTIFICATE
    assert (root / fs.CONSOLE_KEY).read_text() == CONSOLE_KEY
    assert stat.S_IMODE((root / fs.CONSOLE_KEY).stat().st_mode) == 0o600
    env = (root / fs.MANAGEMENT_ENV).read_text()
    assert "FULCRUM_MGMT_VIP=10.0.2.10\nFULCRUM_MGMT_WITNESS=10.0.2.2\n" in env
    assert (root / fs.NGINX_LISTEN["https"]).read_text().splitlines()[-1] == "listen 10.0.2.10:443 ssl;"
    assert "{ 10.0.2.16, 10.0.2.10 }" in (root / fs.MANAGEMENT_NFT).read_text()
    api = [line for line in (root / fs.AGENT_API_ENV).read_text().splitlines() if not line.startswith("#")]
    assert api == ["FULCRUM_API=https://10.0.2.10", f"FULCRUM_API_PIN=/{fs.CLUSTER_CERT}"]
    # The database copies from, then follows, whichever appliance holds the VIP.
    standby = [c["argv"] for c in commands() if c["argv"][0] == "fulcrum-standby-init"]
    assert standby == [["fulcrum-standby-init", "10.0.2.10", "5432", "lb2_2", "lb2"]]


def test_a_management_vip_outside_this_appliances_subnet_refuses_the_join(root, commands, tmp_path):
    seed = write_seed(
        tmp_path / "seed", COMPLETE_SEED + f"    cluster=join\n    join_address=10.0.2.99\n    join_code={GOOD_CODE}\n"
    )
    commands.env["FAKE_JOIN_VIP"] = "10.0.9.10"
    result = run_seeded(root, commands, seed)
    assert result.returncode == 1
    assert "the cluster's management VIP cannot be held here: 10.0.9.10 is not a host address" in result.stdout
    assert not (root / fs.SETUP_DONE).exists() and not (root / fs.CONSOLE_KEY).exists()
    assert not any(c["argv"][0] == "fulcrum-standby-init" for c in commands())


def test_a_seeded_management_vip_is_checked(root, commands, tmp_path):
    seed = write_seed(tmp_path / "seed", COMPLETE_SEED + "    management_vip=10.0.2.15\n")
    child = spawn(root, commands, "--seed-dir", str(seed))
    child.expect_exact("seed: management_vip refused: 10.0.2.15 is already used here (the management address)")
    answer(child, "Management VIP", "10.0.2.10")
    answer(child, "Apply these settings? [yes/no]: ", "yes")
    child.expect_exact("Setup is complete.")
    assert finish(child) == 0
    assert "FULCRUM_MGMT_VIP=10.0.2.10\n" in (root / fs.MANAGEMENT_ENV).read_text()


def test_join_keys_without_cluster_join_are_ignored(root, commands, tmp_path):
    seed = write_seed(tmp_path / "seed", COMPLETE_SEED + "    join_code=AAAA\n")
    result = run_seeded(root, commands, seed)
    assert result.returncode == 0, result.stderr
    assert "seed: join_code is only for cluster=join; ignored." in result.stdout
    assert not any("fulcrum_join" in c["argv"] for c in commands())
    assert any("fulcrum_admin" in c["argv"] for c in commands())


def test_an_incomplete_seed_without_a_terminal_changes_nothing(root, commands, tmp_path):
    seed = write_seed(
        tmp_path / "seed", COMPLETE_SEED.replace("admin_password=Kestrel-Lantern-42", "admin_password=short")
    )
    before = every_written_file(root)
    result = run_seeded(root, commands, seed)
    assert result.returncode == 2
    assert "seed: admin_password refused: at least 10 characters" in result.stdout
    assert "without a terminal the seed must hold every answer" in result.stderr
    assert every_written_file(root) == before
    assert commands() == []


def test_no_system_writes_the_files_and_runs_nothing(root, commands, tmp_path):
    seed = write_seed(tmp_path / "seed", COMPLETE_SEED)
    result = run_seeded(root, commands, seed, "--no-system")
    assert result.returncode == 0, result.stderr
    assert "skipped (--no-system): chpasswd" in result.stdout
    assert commands() == []
    assert (root / fs.NETWORK_FILE).exists() and (root / fs.SETUP_DONE).exists()


def test_once_done_it_never_runs_again(root, commands, tmp_path):
    (root / fs.SETUP_DONE).parent.mkdir(parents=True)
    (root / fs.SETUP_DONE).write_text("done\n")
    seed = write_seed(tmp_path / "seed", COMPLETE_SEED)
    result = run_seeded(root, commands, seed)
    assert result.returncode == 0
    assert "already done" in result.stderr
    assert not (root / fs.NETWORK_FILE).exists() and commands() == []


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/dev/loop-control").exists(), reason="needs root and loop devices")
def test_the_seed_disk_is_found_by_its_label_and_mounted_read_only(tmp_path):
    """A real FULCRUM-SEED ISO on a loop device: blkid finds it, mount reads it read-only (or,
    on a kernel without iso9660 such as this host's may be, says why it is ignored), and no
    mount point is left behind."""
    source = write_seed(tmp_path / "src", COMPLETE_SEED)
    image = tmp_path / "seed.iso"
    subprocess.run(
        ["xorriso", "-as", "mkisofs", "-quiet", "-V", fs.SEED_LABEL, "-J", "-r", "-o", image, source], check=True
    )
    device = subprocess.run(
        ["losetup", "-f", "--show", "-r", image], capture_output=True, text=True, check=True
    ).stdout.strip()
    said = []
    try:
        assert fs.find_seed_device() == device
        before = set(Path("/run").glob("fulcrum-seed-*"))
        seed = fs.read_seed_device(said.append)
        assert set(Path("/run").glob("fulcrum-seed-*")) == before
    finally:
        subprocess.run(["losetup", "-d", device], check=True)
    if seed is None:
        assert any(f"Seed disk {device}: cannot mount it" in line for line in said), said
    else:
        assert seed.values["hostname"] == "lb1.example.com" and seed.source == f"{device} (FULCRUM-SEED)"
        assert device not in Path("/proc/mounts").read_text()


# -- the checks themselves ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, why",
    [
        ("10.0.2.15", "prefix length"),
        ("10.0.2.15/33", "not an address"),
        ("10.0.2.255/24", "broadcast"),
        ("127.0.0.1/8", "cannot be a management address"),
        ("224.0.0.1/24", "cannot be a management address"),
        ("169.254.1.1/16", "cannot be a management address"),
        ("fe80::1/64", "cannot be a management address"),
        ("10.0.0.1/4", "too wide"),
        ("10.0.2.15/24 ", None),
        ("10.0.2.15/32", None),
        ("10.0.2.0/31", None),
        ("2001:db8::/64", None),  # IPv6 has no broadcast; ::0 of a subnet is a usable (if odd) address
    ],
)
def test_management_addresses(text, why):
    if why is None:
        assert fs.parse_address(text)
    else:
        with pytest.raises(fs.Invalid, match=why):
            fs.parse_address(text)


@pytest.mark.parametrize(
    "gateway, address, why",
    [
        ("", "10.0.2.15/24", None),
        ("10.0.2.1", "10.0.2.15/24", None),
        ("10.0.2.15", "10.0.2.15/24", "itself"),
        ("10.0.2.255", "10.0.2.15/24", "broadcast"),
        ("2001:db8::1", "10.0.2.15/24", "IPv4"),
        ("fe80::1", "2001:db8::10/64", None),
        ("2001:db9::1", "2001:db8::10/64", "outside"),
    ],
)
def test_gateways(gateway, address, why):
    if why is None:
        fs.parse_gateway(gateway, fs.parse_address(address))
    else:
        with pytest.raises(fs.Invalid, match=why):
            fs.parse_gateway(gateway, fs.parse_address(address))


def test_dns_servers():
    assert fs.parse_dns(" 10.0.2.3 ,2001:db8::53,, 10.0.2.3") == [
        fs.ipaddress.ip_address("10.0.2.3"),
        fs.ipaddress.ip_address("2001:db8::53"),
    ]
    assert fs.parse_dns("") == []
    with pytest.raises(fs.Invalid, match="at most 3"):
        fs.parse_dns("1.1.1.1,8.8.8.8,9.9.9.9,1.0.0.1")


@pytest.mark.parametrize(
    "name", ["lb1", "LB-1.example.com", "a" * 63, ".".join(["a" * 63] * 3) + ".abc", "lb1.example.com."]
)
def test_good_hostnames(name):
    assert fs.parse_hostname(name) == name.removesuffix(".")


@pytest.mark.parametrize(
    "name",
    ["", "-lb", "lb-", "lb_1", "a" * 64, "lb..x", "10.0.2.15", "lb1\nx", "lb1 x", ".".join(["a" * 63] * 4) + ".abc"],
)
def test_bad_hostnames(name):
    with pytest.raises(fs.Invalid):
        fs.parse_hostname(name)


def test_passwords():
    assert fs.check_password(PASSWORD, set()) == PASSWORD
    for bad, why in (
        ("x" * 9, "at least"),
        ("x" * 129, "at most"),
        ("tab\there-is-long", "control"),
        ("Password123", "too common"),
    ):
        with pytest.raises(fs.Invalid, match=why):
            fs.check_password(bad, {"password123"})


def test_common_passwords_come_from_djangos_list():
    import django

    listed = Path(django.__file__).parent / "contrib/auth/common-passwords.txt.gz"
    common = fs.common_passwords(listed)
    assert "password123" in common and len(common) > 10000
    assert fs.common_passwords("/nonexistent") == set()


@pytest.mark.parametrize(
    ("text", "want"),
    [("10.0.2.15", "10.0.2.15"), ("10.0.2.15:443", "10.0.2.15"), ("lb1.example.com:8443", "lb1.example.com:8443"),
     ("2001:db8::15", "[2001:db8::15]"), ("[2001:db8::15]:8443", "[2001:db8::15]:8443"),
     ("[2001:db8::15]:443", "[2001:db8::15]"), ("[2001:db8::15]", "[2001:db8::15]")],
)  # fmt: skip
def test_join_addresses(text, want):
    assert fs.parse_join_address(text) == want


@pytest.mark.parametrize("text", ["", "127.0.0.1", "0.0.0.0", "lb1:0", "lb1:65536", "lb1;reboot", "[2001:db8::1",
                                  "[2001:db8::1]x", "a b"])  # fmt: skip
def test_bad_join_addresses(text):
    with pytest.raises(fs.Invalid):
        fs.parse_join_address(text)


def test_seed_parsing():
    values, problems = fs.parse_seed("# c\n\n address = 10.0.2.15/24 \ngateway=\nnonsense\nfoo=bar\nhostname=a=b\n")
    assert values == {"address": "10.0.2.15/24", "gateway": "", "hostname": "a=b"}
    assert problems == ["setup.conf line 5: not key=value, ignored", "setup.conf line 6: unknown key 'foo', ignored"]


def test_authorized_key_lines(tmp_path):
    key = a_public_key(tmp_path)
    assert fs.valid_key_line(key)
    assert fs.valid_key_line(f'from="10.0.0.0/8,192.0.2.1",no-pty {key}')
    assert not fs.valid_key_line(f"ssh-rsa {key.split()[1]}")  # an ed25519 blob labelled RSA
    assert not fs.valid_key_line(f"ssh-foo {key.split()[1]}")
    assert not fs.valid_key_line(key + "\x1b[2J")
    assert not fs.valid_key_line("ssh-ed25519 !!!!")
