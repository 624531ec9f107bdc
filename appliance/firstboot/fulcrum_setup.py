#!/usr/bin/python3
"""fulcrum-setup: the appliance's first-boot text setup on the console.

Asks for the management interface, address, gateway, DNS servers, hostname, whether to start
a new cluster (then its management VIP, optional) or join one (then an appliance of that
cluster and a join code) and the admin password (every answer validated, bad ones asked
again; a summary to confirm), then applies them: the console admin's password (Django,
through fulcrum-manage; a new cluster only), the Unix ``admin`` password (chpasswd), a
systemd-networkd file for the interface, /etc/resolv.conf, /etc/hostname, /etc/hosts, the
nginx listen addresses of the console (with the management VIP), /etc/fulcrum/management.env
(read by fulcrum-firstboot and fulcrum-management), when joining the join itself
(``fulcrum-manage fulcrum_join``: the node's agent token, the cluster's pinned certificate,
and with a management VIP the cluster's console key; the agent's /etc/fulcrum/agent/api.env),
and /var/lib/fulcrum/setup.done, after which it never runs again.

Answers may be seeded from a disk labelled FULCRUM-SEED (iso9660 or vfat) holding setup.conf
(key=value lines: interface, address, gateway, dns, hostname, admin_password; cluster=new,
with management_vip (optional), or join, with join_address and join_code) and optionally
root_authorized_keys. A seeded answer is checked like a typed one; a missing or refused one
is asked for. With a complete seed the setup runs unattended.

systemd runs one copy per console (fulcrum-setup@tty1, fulcrum-setup@ttyS0): the first to
finish applies its answers under a lock; the other sees setup.done and stops.

    fulcrum-setup                            on the appliance (systemd runs it at first boot)
    fulcrum-setup --root DIR --no-system     try it anywhere: files go under DIR, no command runs
    fulcrum-setup --seed-dir DIR             read setup.conf from DIR instead of the seed disk

Installed as /usr/sbin/fulcrum-setup by the fulcrum-appliance package. Python standard
library only (Debian trixie's python3). Tests: appliance/firstboot/tests/.
"""

import argparse
import base64
import contextlib
import errno
import fcntl
import getpass
import gzip
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import termios
import time
from dataclasses import dataclass
from pathlib import Path

SEED_LABEL = "FULCRUM-SEED"
SEED_KEYS = ("interface", "address", "gateway", "dns", "hostname", "cluster", "management_vip", "join_address",
             "join_code", "admin_password")  # fmt: skip
JOIN_KEYS = ("join_address", "join_code")  # asked only when joining
NEW_KEYS = ("management_vip",)  # asked only for a new cluster (a joining appliance gets the cluster's)
SEED_MAX_BYTES = 64 * 1024
MIN_PASSWORD = 10  # the API's AUTH_PASSWORD_VALIDATORS minimum
MAX_PASSWORD = 128
MAX_DNS = 3  # glibc reads at most three nameserver lines
LIBEXEC = "/usr/lib/fulcrum/bin"
# Django's list of common passwords, vendored with the API (fulcrum-api): checked here so that
# a refusal comes at the prompt rather than after the summary.
COMMON_PASSWORDS = "/usr/lib/fulcrum/python/django/contrib/auth/common-passwords.txt.gz"

# Where things are, relative to --root.
SETUP_DONE = "var/lib/fulcrum/setup.done"
SETUP_LOCK = "var/lib/fulcrum/setup.lock"
NETWORK_FILE = "etc/systemd/network/10-fulcrum-management.network"
RESOLV_CONF = "etc/resolv.conf"
HOSTNAME_FILE = "etc/hostname"
HOSTS_FILE = "etc/hosts"
NGINX_LISTEN = {
    "https": "etc/fulcrum/nginx/console-listen-https.conf",
    "http": "etc/fulcrum/nginx/console-listen-http.conf",
}
MANAGEMENT_ENV = "etc/fulcrum/management.env"
# Narrows SSH and the console from every address to the management address: included by the
# firewall baseline (appliance/firewall/baseline.nft) in the same transaction.
MANAGEMENT_NFT = "etc/fulcrum/firewall.d/management.nft"
ROOT_KEYS = "root/.ssh/authorized_keys"
# What joining a cluster leaves: the agent's token and where its API is, the cluster's pinned
# certificate, and the cluster this appliance joined (fulcrum-firstboot reads it).
NODE_TOKEN = "etc/fulcrum/agent/node.token"
AGENT_API_ENV = "etc/fulcrum/agent/api.env"
CLUSTER_CERT = "etc/fulcrum/cluster/console.crt"
CLUSTER_ENV = "etc/fulcrum/cluster.env"
# The console's certificate and key: made at first boot on a new cluster's first appliance, the
# cluster's own on one that joins (every appliance serves the same console at the management VIP).
CONSOLE_CERT = "etc/fulcrum/tls/console.crt"
CONSOLE_KEY = "etc/fulcrum/tls/console.key"
# The cluster database's replication password (0640 root:fulcrum): fulcrum-standby-init reads
# it, and the API hands it on should this appliance become the primary.
REPLICATION_SECRET = "etc/fulcrum/cluster/replication.secret"
SERVICE_GROUP = "fulcrum"
JOIN_TRIES, JOIN_PAUSE_S = 10, 3  # the management link may take a moment to come up
KERNEL_HOSTNAME = "proc/sys/kernel/hostname"
SYS_NET = "sys/class/net"

HEADER = "# Written by fulcrum-setup at first boot; run `fulcrum-setup` again only after removing {done}.\n"
LABEL_RE = re.compile(r"\A(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z")
INTERFACE_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.@-]{0,14}\Z")
MAC_RE = re.compile(r"\A[0-9a-f]{2}(:[0-9a-f]{2}){5}\Z")
KEY_TYPES = (
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
)
# An authorized_keys line: optional options (no white space outside quotes), type, base64 blob, comment.
KEY_LINE_RE = re.compile(
    r'\A(?:(?P<options>(?:[^\s"]|"[^"]*")+)\s+)?(?P<type>\S+)\s+(?P<blob>[A-Za-z0-9+/]+={0,2})(?:\s+.*)?\Z'
)


class Invalid(ValueError):
    """An answer that cannot be used; the message says why."""


class DoneElsewhere(Exception):
    """The other console finished the setup first."""


class CommandFailed(Exception):
    """A system command of the apply step failed."""


class PasswordRefused(CommandFailed):
    """The API's password validators refused the admin password."""


class JoinRefused(CommandFailed):
    """The cluster (or the checks before it) refused the join; the message says why."""


# -- the answers ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Interface:
    """A network interface the management address can go on."""

    name: str
    mac: str | None  # None when it has no usable hardware address: match it by name

    def __str__(self):
        return f"{self.name} ({self.mac})" if self.mac else self.name


def list_interfaces(root):
    """The non-loopback, non-virtual interfaces under ROOT/sys/class/net, sorted by name."""
    found = []
    base = root / SYS_NET
    for entry in sorted(base.iterdir()) if base.is_dir() else []:
        if entry.name == "lo" or "/devices/virtual/" in os.path.realpath(entry):
            continue
        if not INTERFACE_RE.match(entry.name) or read_small(entry / "type", "1") == "772":
            continue
        mac = read_small(entry / "address", "").lower()
        usable = MAC_RE.match(mac) and mac != "00:00:00:00:00:00"
        found.append(Interface(entry.name, mac if usable else None))
    return found


def read_small(path, default):
    try:
        return path.read_text().strip()
    except OSError:
        return default


def parse_interface(text, interfaces):
    """An interface by name (or by MAC address) among ``interfaces``."""
    text = text.strip()
    for interface in interfaces:
        if text in (interface.name, interface.mac):
            return interface
    names = ", ".join(i.name for i in interfaces) or "none found"
    raise Invalid(f"no interface {text!r}; choose one of: {names}")


def parse_address(text):
    """A host address with its prefix length, IPv4 (192.0.2.10/24) or IPv6 (2001:db8::10/64)."""
    text = text.strip()
    if "/" not in text:
        raise Invalid("give the prefix length too, e.g. 192.0.2.10/24 or 2001:db8::10/64")
    try:
        address = ipaddress.ip_interface(text)
    except ValueError as err:
        raise Invalid(f"not an address with a prefix length: {err}") from None
    ip, network = address.ip, address.network
    if ip.is_loopback or ip.is_multicast or ip.is_unspecified or ip.is_link_local:
        raise Invalid(f"{ip} cannot be a management address (loopback, multicast, unspecified or link-local)")
    if network.prefixlen < 8:
        raise Invalid(f"/{network.prefixlen} is too wide a network for a management address")
    if network_or_broadcast(ip, network):
        raise Invalid(f"{ip} is the network's own or broadcast address in {network}")
    return address


def network_or_broadcast(ip, network):
    """An IPv4 subnet's own address or its broadcast address (which /31 and /32 do not have)."""
    return ip.version == 4 and network.prefixlen <= 30 and ip in (network.network_address, network.broadcast_address)


def same_family(text, address, what, hint=""):
    """An IP address of the management address's family; ``what`` names it in the refusal."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        raise Invalid(f"{text!r} is not an IP address{hint}") from None
    if ip.version != address.version:
        raise Invalid(f"the {what} must be an IPv{address.version} address, like the management address")
    return ip


def parse_gateway(text, address):
    """Optional: an address of the same family inside the management subnet (IPv6: or link-local)."""
    text = text.strip()
    if not text:
        return None
    gateway = same_family(text, address, "gateway")
    if gateway == address.ip:
        raise Invalid("the gateway cannot be the management address itself")
    network = address.network
    if gateway in network:
        if network_or_broadcast(gateway, network):
            raise Invalid(f"{gateway} is the network's own or broadcast address")
        return gateway
    if gateway.version == 6 and gateway.is_link_local:
        return gateway
    raise Invalid(f"{gateway} is outside the management subnet {network}")


def parse_management_vip(text, address, gateway=None):
    """Optional: the cluster's management VIP, an unused address of the management subnet that
    the console, the API and the agents use, and which the appliance with the writable database
    holds. Empty: none (each appliance is managed at its own address)."""
    text = text.strip()
    if not text:
        return ""
    vip = same_family(text, address, "management VIP", " (no prefix length: the management subnet's is used)")
    if vip not in address.network or network_or_broadcast(vip, address.network):
        raise Invalid(f"{vip} is not a host address of the management subnet {address.network}")
    if vip == address.ip or vip == gateway:
        raise Invalid(f"{vip} is already used here (the {'management address' if vip == address.ip else 'gateway'})")
    return vip


def parse_dns(text):
    """Optional: up to three comma-separated IPv4 or IPv6 addresses."""
    servers = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        try:
            server = ipaddress.ip_address(item)
        except ValueError:
            raise Invalid(f"{item!r} is not an IP address") from None
        if server.is_multicast or server.is_unspecified:
            raise Invalid(f"{server} cannot be a DNS server")
        if server not in servers:
            servers.append(server)
    if len(servers) > MAX_DNS:
        raise Invalid(f"at most {MAX_DNS} DNS servers (the resolver reads no more)")
    return servers


def parse_hostname(text):
    """An RFC 1123 host name: one label (lb1) or a fully qualified name (lb1.example.com)."""
    name = text.strip().removesuffix(".")
    if not name:
        raise Invalid("a host name is required")
    if len(name) > 253:
        raise Invalid("at most 253 characters")
    labels = name.split(".")
    for label in labels:
        if not LABEL_RE.match(label):
            raise Invalid(
                f"{label!r}: each part is 1-63 letters, digits or '-', not starting or ending with '-' "
                "(parts separated by '.')"
            )
    if labels[-1].isdigit():
        raise Invalid("the last part cannot be all digits (that reads as an IP address)")
    return name


def parse_cluster(text):
    """``new`` (Enter) or ``join``."""
    choice = text.strip().lower() or "new"
    if choice in ("new", "n"):
        return "new"
    if choice in ("join", "j"):
        return "join"
    raise Invalid("answer new (start a new cluster) or join (join an existing one)")


def parse_join_address(text):
    """An appliance of the cluster: an address or a host name, optionally with :port
    (IPv6 with a port in brackets). Returns it as a URL's host and port: ``host``,
    ``host:port``, ``[v6]`` or ``[v6]:port`` (the agent's API URL and the console's link)."""
    text = text.strip()
    host, port = text, None
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise Invalid("an IPv6 address with a port goes in brackets: [2001:db8::10]:443")
        port = rest[1:] or None
    elif text.count(":") == 1:
        host, port = text.split(":")
    try:
        address = ipaddress.ip_address(host)
        if address.is_unspecified or address.is_multicast or address.is_loopback:
            raise Invalid(f"{address} cannot be another appliance's address")
        host = str(address)
    except ValueError:
        host = parse_hostname(host)
    if port is not None:
        if not port.isdigit() or not 1 <= int(port) <= 65535:
            raise Invalid(f"{port!r} is not a port (1-65535)")
        port = int(port)
    if ":" in host:
        host = f"[{host}]"
    return host if port in (None, 443) else f"{host}:{port}"


def join_host(target):
    """The host of a join address as ``parse_join_address`` gives it (no brackets, no port)."""
    if target.startswith("["):
        return target[1:].partition("]")[0]
    return target.partition(":")[0]


def parse_join_code(text):
    """The code as shown on the cluster (its format is the cluster's to check)."""
    code = " ".join(text.split())
    if not code:
        raise Invalid("the join code is required: make one on the cluster (Nodes → Add an appliance)")
    if len(code) > 64 or not all(c.isalnum() or c in "- " for c in code):
        raise Invalid("a join code is letters and digits in groups, e.g. K7QM-W2XD-9HRT-5BNP-3CAZ")
    return code


def check_password(text, common=None):
    """The admin password: the API's rules (length, not a common one), printable characters only."""
    if len(text) < MIN_PASSWORD:
        raise Invalid(f"at least {MIN_PASSWORD} characters")
    if len(text) > MAX_PASSWORD:
        raise Invalid(f"at most {MAX_PASSWORD} characters")
    if any(not c.isprintable() for c in text):
        raise Invalid("letters, digits, spaces and punctuation only (no control characters)")
    if text.lower().strip() in (common if common is not None else common_passwords()):
        raise Invalid("this password is too common")
    return text


def common_passwords(path=COMMON_PASSWORDS):
    """Django's common-password list, when the API's vendored Django is installed; else empty."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return {line.strip() for line in f}
    except OSError:
        return set()


@dataclass
class Answers:
    """What the setup asks. ``admin_password`` is never written to any file."""

    interface: Interface | None = None
    address: ipaddress.IPv4Interface | ipaddress.IPv6Interface | None = None
    gateway: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None
    dns: list | None = None
    hostname: str | None = None
    cluster: str | None = None  # "new" or "join"
    management_vip: object = None  # an address; "" for none (None: not answered yet)
    join_address: str | None = None
    join_code: str | None = None  # like the password: never written to a file
    admin_password: str | None = None

    def summary(self):
        lines = [
            ("Management interface", str(self.interface)),
            ("Management address", str(self.address)),
            ("Default gateway", str(self.gateway) if self.gateway else "(none)"),
            ("DNS servers", ", ".join(map(str, self.dns)) if self.dns else "(none)"),
            ("Hostname", self.hostname),
            ("Cluster", "new" if self.cluster != "join" else f"join the cluster of {self.join_address}"),
        ]
        if self.cluster == "join":
            lines.append(("Join code", "(set)"))
        else:
            lines.append(("Management VIP", str(self.management_vip) if self.management_vip else "(none)"))
        return lines + [("Admin password", "(set)")]


# -- the seed -------------------------------------------------------------------------------


def parse_seed(text):
    """setup.conf: ``key=value`` lines, '#' comments. Returns (values, problems)."""
    values, problems = {}, []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep:
            problems.append(f"setup.conf line {number}: not key=value, ignored")
        elif key not in SEED_KEYS:
            problems.append(f"setup.conf line {number}: unknown key {key!r}, ignored")
        else:
            values[key] = value.strip()
    return values, problems


def parse_authorized_keys(text):
    """The valid public-key lines of a root_authorized_keys file, and problems with the others."""
    keys, problems = [], []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if valid_key_line(line):
            keys.append(line)
        else:
            problems.append(f"root_authorized_keys line {number}: not an SSH public key, ignored")
    return keys, problems


def valid_key_line(line):
    """A key type we know and a blob that really holds a key of that type."""
    if any(not c.isprintable() for c in line):
        return False
    match = KEY_LINE_RE.match(line)
    if not match or match["type"] not in KEY_TYPES:
        return False
    try:
        blob = base64.b64decode(match["blob"], validate=True)
    except ValueError:
        return False
    name = match["type"].encode()
    return blob[:4] == len(name).to_bytes(4, "big") and blob[4 : 4 + len(name)] == name


@dataclass
class Seed:
    """What a FULCRUM-SEED disk (or --seed-dir) holds."""

    values: dict
    keys: list
    problems: list
    source: str


def read_seed_dir(directory):
    """setup.conf and root_authorized_keys of a mounted seed; None when it holds neither."""
    directory, texts, problems = Path(directory), {}, []
    for name in ("setup.conf", "root_authorized_keys"):
        try:
            texts[name] = read_limited(directory / name)
        except (Invalid, OSError) as err:
            texts[name] = ""
            problems.append(f"{name}: {err}, ignored")
    if texts["setup.conf"] is None and texts["root_authorized_keys"] is None:
        return None
    values, conf_problems = parse_seed(texts["setup.conf"] or "")
    keys, key_problems = parse_authorized_keys(texts["root_authorized_keys"] or "")
    return Seed(values, keys, problems + conf_problems + key_problems, str(directory))


def read_limited(path):
    try:
        with open(path, "rb") as f:
            data = f.read(SEED_MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    if len(data) > SEED_MAX_BYTES:
        raise Invalid(f"larger than {SEED_MAX_BYTES} bytes")
    return data.decode("utf-8", errors="replace")


def find_seed_device(tries=4, pause=0.5):
    """The block device labelled FULCRUM-SEED, waiting briefly for a slow disk; or None."""
    for attempt in range(tries):
        result = subprocess.run(
            ["blkid", "-c", "/dev/null", "-l", "-o", "device", "-t", f"LABEL={SEED_LABEL}"],
            capture_output=True,
            text=True,
        )
        device = result.stdout.strip()
        if result.returncode == 0 and device.startswith("/dev/"):
            return device
        if attempt + 1 < tries:
            time.sleep(pause)
    return None


def read_seed_device(say):
    """Mount the seed disk read-only in a private folder, read it, unmount it."""
    device = find_seed_device()
    if device is None:
        return None
    mountpoint = tempfile.mkdtemp(prefix="fulcrum-seed-", dir="/run")
    try:
        mounted = subprocess.run(
            ["mount", "-o", "ro,nosuid,nodev,noexec", "-t", "iso9660,vfat", device, mountpoint],
            capture_output=True,
            text=True,
        )
        if mounted.returncode != 0:
            say(f"Seed disk {device}: cannot mount it ({mounted.stderr.strip()}); ignoring it.")
            return None
        try:
            seed = read_seed_dir(mountpoint)
        finally:
            subprocess.run(["umount", mountpoint], capture_output=True)
        if seed:
            seed.source = f"{device} ({SEED_LABEL})"
        return seed
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(mountpoint)


# -- the console ------------------------------------------------------------------------------


class Console:
    """Prompts on the terminal (standard input/output). Raises DoneElsewhere when the other
    console has finished the setup, checked every second while waiting for an answer."""

    MAX_EOF = 20  # a hung-up terminal reads end-of-file forever; Ctrl-D alone is just an empty answer

    def __init__(self, root, interactive):
        self.root = root
        self.interactive = interactive
        self.eofs = 0

    def say(self, text=""):
        print(text, flush=True)

    def ask(self, prompt, hidden=False):
        if not self.interactive:
            raise Invalid("no terminal to ask on")
        try:
            if hidden:
                answer = getpass.getpass(prompt)  # prompts on the controlling terminal, /dev/tty
            else:
                # input(prompt) writes the prompt to stderr when both ends are terminals, and
                # the unit sends stderr to the journal: the prompt goes where the answers come from.
                sys.stdout.write(prompt)
                sys.stdout.flush()
                answer = input()
        except EOFError:
            self.eofs += 1
            if self.eofs >= self.MAX_EOF:
                raise
            self.say()
            return ""
        self.eofs = 0
        return answer

    @contextlib.contextmanager
    def watching(self):
        """While waiting for answers, stop as soon as the other console has finished."""

        def check(signum, frame):
            if (self.root / SETUP_DONE).exists():
                raise DoneElsewhere()

        previous = signal.signal(signal.SIGALRM, check)
        signal.setitimer(signal.ITIMER_REAL, 1.0, 1.0)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


# The questions in order, with their prompts ({default}: what Enter keeps, if anything).
PROMPTS = {
    "interface": "Management interface [{default}]: ",
    "address": "Management address (CIDR, e.g. 192.0.2.10/24 or 2001:db8::10/64){default}: ",
    "gateway": "Default gateway (empty for none){default}: ",
    "dns": "DNS servers (comma-separated, empty for none){default}: ",
    "hostname": "Hostname (e.g. lb1 or lb1.example.com){default}: ",
    "cluster": "Start a new cluster or join one? (new/join){default}: ",
    "management_vip": "Management VIP, an unused address the pair is managed at (empty for none){default}: ",
    "join_address": "An appliance of the cluster (address or name){default}: ",
    "join_code": "Join code (Nodes → Add an appliance on the cluster){default}: ",
}


class Setup:
    """Collects the answers (seed, then console) and applies them."""

    def __init__(self, root, console, system):
        self.root = root
        self.console = console
        self.system = system
        self.interfaces = list_interfaces(root)
        self.common = common_passwords()

    def parse(self, key, text, answers):
        if key == "interface":
            return self.parse_interface(text)
        if key == "address":
            return parse_address(text)
        if key == "gateway":
            return parse_gateway(text, answers.address)
        if key == "dns":
            return parse_dns(text)
        if key == "hostname":
            return parse_hostname(text)
        if key == "cluster":
            return parse_cluster(text)
        if key == "management_vip":
            return parse_management_vip(text, answers.address, answers.gateway)
        if key == "join_address":
            return parse_join_address(text)
        if key == "join_code":
            return parse_join_code(text)
        return check_password(text, self.common)

    def parse_interface(self, text):
        """By name, MAC address or number in the list; empty means the first one."""
        text = text.strip()
        if not text and self.interfaces:
            return self.interfaces[0]
        if text.isdigit() and 1 <= int(text) <= len(self.interfaces):
            return self.interfaces[int(text) - 1]
        return parse_interface(text, self.interfaces)

    def from_seed(self, seed):
        """The seeded answers that pass their checks; says why each other one is asked."""
        answers = Answers()
        if seed is None:
            return answers, False
        self.console.say(f"Seed found on {seed.source}.")
        for problem in seed.problems:
            self.console.say(f"  {problem}")
        if not seed.values:
            self.console.say("  It holds no setup answers (setup.conf); asking for them.")
            return answers, False
        complete = True
        for key in SEED_KEYS:
            if key == "cluster" and key not in seed.values:
                answers.cluster = "new"  # a seed from before clusters: a new one, as then
                continue
            if key in JOIN_KEYS and answers.cluster != "join":
                if key in seed.values:
                    self.console.say(f"  seed: {key} is only for cluster=join; ignored.")
                continue
            if key in NEW_KEYS and answers.cluster != "new":
                if key in seed.values:
                    self.console.say(
                        f"  seed: {key} is only for cluster=new (a joining appliance gets the cluster's); ignored."
                    )
                continue
            if key == "management_vip" and key not in seed.values:
                answers.management_vip = ""  # optional: a seed without it means none
                continue
            if key == "management_vip" and answers.address is None:
                self.console.say("  seed: management_vip not checked (the address was refused); asking for it.")
                complete = False
                continue
            if key not in seed.values:
                self.console.say(f"  seed: no {key}; asking for it.")
                complete = False
                continue
            if key == "gateway" and answers.address is None:
                self.console.say("  seed: gateway not checked (the address was refused); asking for it.")
                complete = False
                continue
            try:
                setattr(answers, key, self.parse(key, seed.values[key], answers))
            except Invalid as err:
                self.console.say(f"  seed: {key} refused: {err}; asking for it.")
                complete = False
        return answers, complete

    def show_interfaces(self):
        self.console.say("Network interfaces:")
        for number, interface in enumerate(self.interfaces, 1):
            self.console.say(f"  {number}) {interface.name:<16} {interface.mac or '(no MAC address)'}")

    def ask_one(self, key, answers, previous):
        """Ask until the answer passes; Enter keeps ``previous`` (the value of the round before),
        which is checked again since the answers it depends on may have changed."""
        if key == "interface":
            default = (previous or self.interfaces[0]).name
            prompt = PROMPTS[key].format(default=default)
        else:
            if key == "cluster":
                previous = previous or "new"
            default = ",".join(map(str, previous)) if isinstance(previous, list) else str(previous or "")
            prompt = PROMPTS[key].format(default=f" [{default}]" if default else "")
        while True:
            text = self.console.ask(prompt).strip() or default
            try:
                return self.parse(key, text, answers)
            except Invalid as err:
                self.console.say(f"  Invalid: {err}")

    def ask_password(self):
        while True:
            first = self.console.ask(f"Admin password (at least {MIN_PASSWORD} characters): ", hidden=True)
            try:
                check_password(first, self.common)
            except Invalid as err:
                self.console.say(f"  Invalid: {err}")
                continue
            if self.console.ask("Admin password again: ", hidden=True) == first:
                return first
            self.console.say("  Invalid: the two passwords differ")

    def ask_missing(self, answers, previous=None):
        """Ask every question ``answers`` lacks; with ``previous``, ask them all again."""
        if not self.interfaces:
            raise SystemExit("fulcrum-setup: no network interface found (only loopback or virtual ones)")
        self.show_interfaces()
        for key in PROMPTS:
            if key in JOIN_KEYS and answers.cluster != "join":
                setattr(answers, key, None)
                continue
            if key in NEW_KEYS and answers.cluster != "new":
                setattr(answers, key, "")
                continue
            if previous is not None or getattr(answers, key) is None:
                before = getattr(previous, key) if previous is not None else None
                setattr(answers, key, self.ask_one(key, answers, before))
        if previous is not None or answers.admin_password is None:
            answers.admin_password = self.ask_password()
        return answers

    def confirm(self, answers):
        self.console.say()
        self.console.say("Summary:")
        for label, value in answers.summary():
            self.console.say(f"  {label:<22}{value}")
        while True:
            reply = self.console.ask("Apply these settings? [yes/no]: ").strip().lower()
            if reply in ("y", "yes"):
                return True
            if reply in ("n", "no"):
                return False
            self.console.say("  Please answer yes or no.")

    def collect(self, seed):
        """All answers: the seed's, then the console's; confirmed unless the seed gave them all."""
        answers, complete = self.from_seed(seed)
        if complete:
            return answers
        with self.console.watching():
            self.ask_missing(answers)
            while not self.confirm(answers):
                self.console.say("Answer again (Enter keeps the value in brackets).")
                answers = self.ask_missing(Answers(), previous=answers)
        return answers

    def run(self, seed):
        """Collect, apply, and if the API refuses the password, ask for another one."""
        answers = self.collect(seed)
        while True:
            try:
                Applier(self.root, self.system, self.console.say).apply(answers, seed.keys if seed else [])
                return
            except PasswordRefused as err:
                self.console.say(f"  The console refused the admin password: {err}")
                with self.console.watching():
                    answers.admin_password = self.ask_password()
            except JoinRefused as err:
                self.console.say(f"  The join was refused: {err}")
                if not self.console.interactive:
                    raise SystemExit(1) from None
                self.console.say("Give the cluster's address and a join code again (Enter keeps the bracketed value).")
                with self.console.watching():
                    for key in JOIN_KEYS:
                        setattr(answers, key, self.ask_one(key, answers, getattr(answers, key)))
            except CommandFailed as err:
                self.console.say(f"Setup could not be applied: {err}")
                if not self.console.interactive:
                    raise SystemExit(1) from None
                with self.console.watching():
                    if self.console.ask("Try again? [yes/no]: ").strip().lower() not in ("y", "yes"):
                        raise SystemExit(1) from None


# -- applying ---------------------------------------------------------------------------------


class Applier:
    """Writes the files under ``root`` and runs the system commands (unless ``system`` is False).

    Every step can be repeated: a setup cut short by a reboot runs again from the start, and
    setup.done is written last.
    """

    def __init__(self, root, system, say):
        self.root = root
        self.system = system
        self.say = say

    def apply(self, answers, keys):
        (self.root / SETUP_DONE).parent.mkdir(parents=True, exist_ok=True)
        with open(self.root / SETUP_LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if (self.root / SETUP_DONE).exists():
                raise DoneElsewhere()
            if answers.cluster == "join":
                # The cluster's admins sign in to the console: no console password here. The
                # network comes first, for the join goes over it.
                self.run(["fulcrum-api-init"])
            else:
                self.set_console_password(answers.admin_password)
            self.run(["chpasswd"], stdin=f"admin:{answers.admin_password}\n")
            self.write_files(answers, keys)
            self.set_kernel_hostname(answers.hostname)
            self.reload_network()
            self.reload_firewall()
            if answers.cluster == "join":
                self.join(answers)
            finished = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            write_file(self.root / SETUP_DONE, f"setup finished on {ttyname()} at {finished}\n")
        self.say("Setup is complete.")

    def set_console_password(self, password):
        self.say("Preparing the database and the console's admin account (a minute on first boot)...")
        self.run(["fulcrum-api-init"])
        self.run(["fulcrum-manage", "migrate", "--no-input"])
        try:
            self.run(["fulcrum-manage", "fulcrum_admin", "--password-stdin"], stdin=password + "\n")
        except CommandFailed as err:
            if "password refused" in str(err):
                raise PasswordRefused(str(err).split("password refused:", 1)[1].strip()) from None
            raise

    def join(self, answers):
        """``fulcrum-manage fulcrum_join`` (the code on standard input); then the node's token,
        the cluster's certificate and the agent's API file. Raises JoinRefused."""
        short, address = answers.hostname.split(".")[0], str(answers.address.ip)
        argv = ["fulcrum-manage", "fulcrum_join", answers.join_address, "--name", short, "--address", address]
        self.say(f"Joining the cluster of {answers.join_address}...")
        for attempt in range(1, JOIN_TRIES + 1):
            try:
                out = self.run(argv, stdin=answers.join_code + "\n")
                break
            except CommandFailed as err:
                reason = str(err).split("join refused:", 1)[-1].strip()
                if "cannot reach the cluster" in reason and attempt < JOIN_TRIES:
                    time.sleep(JOIN_PAUSE_S)  # the link, ARP, the other side's firewall reload
                    continue
                raise JoinRefused(reason) from None
        if out is None:  # --no-system
            return
        try:
            joined = json.loads(out)
            token, certificate, node = joined["token"], joined["certificate"], joined["node"]
            replication = joined["replication"]
        except (ValueError, KeyError, TypeError):
            raise CommandFailed("fulcrum_join printed no join result") from None
        if not re.fullmatch(r"[A-Za-z0-9_-]{20,200}", token) or "-----BEGIN CERTIFICATE-----" not in certificate:
            raise CommandFailed("fulcrum_join printed a malformed token or certificate")
        if not isinstance(replication, dict):
            raise JoinRefused("the cluster's database does not replicate: join an appliance installed from the image")
        api = answers.join_address
        vip, key = self.management(answers, replication)
        (self.root / NODE_TOKEN).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_file(self.root / NODE_TOKEN, token + "\n", 0o600)
        write_file(self.root / CLUSTER_CERT, certificate, 0o644)
        if vip:
            # The cluster's console, served here too once this appliance holds the VIP.
            write_file(self.root / CONSOLE_CERT, certificate, 0o644)
            write_file(self.root / CONSOLE_KEY, key, 0o600)
            answers.management_vip = vip
            self.write_files(answers, [])  # the VIP: console, firewall, management.env, the agent's API
            self.reload_firewall()
        else:
            write_file(self.root / AGENT_API_ENV, HEADER.format(done="/" + SETUP_DONE)
                       + f"FULCRUM_API=https://{api}\nFULCRUM_API_PIN=/{CLUSTER_CERT}\n", 0o644)  # fmt: skip
        write_file(self.root / CLUSTER_ENV, HEADER.format(done="/" + SETUP_DONE)
                   + f"FULCRUM_CLUSTER_JOINED={api}\nFULCRUM_CLUSTER_NODE={node}\n", 0o644)  # fmt: skip
        self.say(f"Joined: this appliance is node {node} of the cluster of {api}.")
        # Through the VIP when there is one: the standby then follows whichever appliance holds it.
        self.replicate(str(vip) if vip else join_host(api), replication, node)

    def management(self, answers, offer):
        """The cluster's management VIP and console key from the join's offer: (None, None) when
        the cluster has no VIP. Raises JoinRefused when the VIP cannot be this appliance's."""
        vip = offer.get("management_vip") if isinstance(offer, dict) else None
        if not vip:
            return None, None
        try:
            vip = parse_management_vip(str(vip), answers.address)
        except Invalid as err:
            raise JoinRefused(f"the cluster's management VIP cannot be held here: {err}") from None
        key = offer.get("console_key")
        if not isinstance(key, str) or not re.fullmatch(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END [A-Z ]*PRIVATE KEY-----\n?", key
        ):
            raise CommandFailed("fulcrum_join printed no console key with the management VIP")
        return vip, key

    def replicate(self, host, offer, node):
        """Make the database a standby of the primary's at ``host`` (fulcrum-standby-init)."""
        try:
            secret, port, slot = offer["password"], int(offer["port"]), offer["slot"]
        except (KeyError, TypeError, ValueError):
            raise CommandFailed("fulcrum_join printed a malformed replication offer") from None
        if not re.fullmatch(r"[A-Za-z0-9_-]{32,128}", str(secret)) or not re.fullmatch(r"[a-z0-9_]{1,63}", str(slot)):
            raise CommandFailed("fulcrum_join printed a malformed replication offer")
        path = self.root / REPLICATION_SECRET
        write_file(path, secret + "\n", 0o640)
        with contextlib.suppress(LookupError):  # no such group outside the appliance (--root)
            shutil.chown(path, group=SERVICE_GROUP)
        self.say("Copying the cluster's database (it then streams every change)...")
        self.run(["fulcrum-standby-init", host, str(port), slot, node])
        self.say(f"This appliance's database is a standby of {host}.")

    def write_files(self, answers, keys):
        files = render_files(answers)
        for relative, (content, mode) in files.items():
            write_file(self.root / relative, content, mode)
        if keys:
            self.add_root_keys(keys)

    def add_root_keys(self, keys):
        path = self.root / ROOT_KEYS
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(path.parent, 0o700)
        existing = path.read_text().splitlines() if path.exists() else []
        lines = existing + [key for key in keys if key not in existing]
        write_file(path, "\n".join(lines) + "\n", 0o600)

    def set_kernel_hostname(self, hostname):
        path = self.root / KERNEL_HOSTNAME
        if not self.system:
            self.say(f"skipped (--no-system): setting the running hostname to {hostname.split('.')[0]}")
        elif path.exists():
            path.write_text(hostname.split(".")[0])

    def reload_network(self):
        """systemd-networkd reads the new file when it starts; if it already runs, reload it."""
        if not self.system:
            self.say("skipped (--no-system): networkctl reload")
            return
        probe = subprocess.run(["systemctl", "is-active", "--quiet", "systemd-networkd.service"])
        if probe.returncode == 0:
            self.run(["networkctl", "reload"])

    def reload_firewall(self):
        """Load the baseline again, now with management.nft (the agent refills its sets itself)."""
        if not self.system:
            self.say("skipped (--no-system): systemctl reload fulcrum-firewall")
            return
        self.run(["systemctl", "reload", "fulcrum-firewall.service"])

    def run(self, argv, stdin=None):
        """Run a system command; secrets go on standard input, never in ``argv``. Returns
        its standard output (None under --no-system)."""
        if not self.system:
            self.say(f"skipped (--no-system): {' '.join(argv)}")
            return None
        search = os.environ.get("PATH", os.defpath) + os.pathsep + LIBEXEC
        program = shutil.which(argv[0], path=search)
        if program is None:
            raise CommandFailed(f"{argv[0]}: not installed")
        result = subprocess.run([program, *argv[1:]], input=stdin, capture_output=True, text=True)
        if result.returncode != 0:
            detail = (result.stderr.strip() or result.stdout.strip()).splitlines()
            raise CommandFailed(f"{' '.join(argv)}: {detail[-1] if detail else f'exit status {result.returncode}'}")
        return result.stdout


def render_files(answers):
    """{relative path: (content, mode)} of every file the answers make. Only checked values
    (addresses, a validated host name and interface) reach them."""
    short = answers.hostname.split(".")[0]
    ip, address, vip = answers.address.ip, answers.address, answers.management_vip
    # The console answers on the management address, and on the VIP (bound while another
    # appliance holds it: ip_nonlocal_bind) so that it serves it once this one does.
    hosts = [f"[{a}]" if a.version == 6 else str(a) for a in ([ip, vip] if vip else [ip])]
    done = "/" + SETUP_DONE
    files = {
        NETWORK_FILE: (render_network(answers), 0o644),
        RESOLV_CONF: (render_resolv(answers), 0o644),
        HOSTNAME_FILE: (short + "\n", 0o644),  # Debian's way: the short name; /etc/hosts gives the FQDN
        HOSTS_FILE: (render_hosts(answers, short), 0o644),
        NGINX_LISTEN["https"]: (HEADER.format(done=done) + "".join(f"listen {h}:443 ssl;\n" for h in hosts), 0o644),
        NGINX_LISTEN["http"]: (HEADER.format(done=done) + "".join(f"listen {h}:80;\n" for h in hosts), 0o644),
        MANAGEMENT_NFT: (render_management_nft(answers), 0o644),
        MANAGEMENT_ENV: (
            HEADER.format(done=done)
            + f"FULCRUM_MGMT_INTERFACE={answers.interface.name}\n"
            + f"FULCRUM_MGMT_ADDRESS={ip}\n"
            + f"FULCRUM_MGMT_PREFIX={address.network.prefixlen}\n"
            + f"FULCRUM_HOSTNAME={answers.hostname}\n"
            # The management VIP (appliance/api/fulcrum-management), and its witness: the
            # gateway, which an appliance must reach to hold the VIP.
            + (f"FULCRUM_MGMT_VIP={vip}\n" if vip else "")
            + (f"FULCRUM_MGMT_WITNESS={answers.gateway}\n" if vip and answers.gateway else ""),
            0o644,
        ),
    }
    if vip:
        # Every agent uses the cluster's API at the VIP, which ever appliance holds it: the
        # same console certificate on each (the join hands it over), pinned.
        pin = CLUSTER_CERT if answers.cluster == "join" else CONSOLE_CERT
        files[AGENT_API_ENV] = (
            HEADER.format(done=done) + f"FULCRUM_API=https://{hosts[1]}\nFULCRUM_API_PIN=/{pin}\n",
            0o644,
        )
    return files


def render_network(answers):
    interface = answers.interface
    match = f"MACAddress={interface.mac}\nType=ether\n" if interface.mac else f"Name={interface.name}\n"
    lines = [
        HEADER.format(done="/" + SETUP_DONE).rstrip("\n"),
        f"# The management interface ({interface.name} when the setup ran).",
        "[Match]",
        match.rstrip("\n"),
        "",
        "[Network]",
        f"Address={answers.address}",
    ]
    if answers.gateway:
        lines.append(f"Gateway={answers.gateway}")
    # A static management address: no router advertisements, no DHCP.
    lines += ["IPv6AcceptRA=no", "LinkLocalAddressing=ipv6", ""]
    return "\n".join(lines)


def render_management_nft(answers):
    """The management set of the firewall baseline: SSH and the console on this address only."""
    family = "management6" if answers.address.ip.version == 6 else "management4"
    addresses = ", ".join(str(a) for a in (answers.address.ip, answers.management_vip) if a)
    return (
        HEADER.format(done="/" + SETUP_DONE)
        + f"flush set inet fulcrum_firewall {family}\n"
        + f"add element inet fulcrum_firewall {family} {{ {addresses} }}\n"
    )


def render_resolv(answers):
    lines = [HEADER.format(done="/" + SETUP_DONE).rstrip("\n"), "# Static: the appliance runs no resolver daemon."]
    if "." in answers.hostname:
        lines.append(f"search {answers.hostname.split('.', 1)[1]}")
    lines += [f"nameserver {server}" for server in answers.dns or []]
    return "\n".join(lines) + "\n"


def render_hosts(answers, short):
    names = f"{answers.hostname} {short}" if short != answers.hostname else short
    return (
        HEADER.format(done="/" + SETUP_DONE)
        + "127.0.0.1\tlocalhost\n"
        + f"{answers.address.ip}\t{names}\n"
        + "::1\t\tlocalhost ip6-localhost ip6-loopback\n"
        + "ff02::1\t\tip6-allnodes\n"
        + "ff02::2\t\tip6-allrouters\n"
    )


def write_file(path, content, mode=0o644):
    """Replace ``path`` atomically (a symbolic link there is replaced, not followed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def ttyname():
    try:
        return os.ttyname(0)
    except OSError:
        return "no terminal"


# -- main -------------------------------------------------------------------------------------


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="fulcrum-setup", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path("/"), help="write files under this folder (default /)")
    parser.add_argument(
        "--no-system",
        action="store_true",
        help="run no system command (chpasswd, fulcrum-manage, networkctl, mount) and leave the hostname",
    )
    parser.add_argument("--seed-dir", type=Path, help="read setup.conf and root_authorized_keys from this folder")
    parser.add_argument("--force", action="store_true", help="run even though setup.done exists")
    return parser.parse_args(argv)


def terminal_state():
    """ "usable"; "none" when standard input is no terminal (a script: only a complete seed
    will do); "broken" when it is one that fails (a serial port without a UART opens, then
    fails reads and writes with EIO; a hung-up terminal fails even tcgetattr)."""
    try:
        termios.tcgetattr(0)
    except termios.error as err:
        return "broken" if err.args[0] in (errno.EIO, errno.ENXIO) else "none"
    try:
        os.write(1, b"\r\n")
    except OSError as err:
        if err.errno in (errno.EIO, errno.ENXIO):
            return "broken"
        raise
    return "usable"


def load_seed(args, say):
    if args.seed_dir:
        return read_seed_dir(args.seed_dir)
    if args.no_system:
        return None
    return read_seed_device(say)


def stop_on_sigterm(signum, frame):
    raise SystemExit("fulcrum-setup: stopped")


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    root = args.root.resolve()
    if (root / SETUP_DONE).exists() and not args.force:
        print(f"fulcrum-setup: already done ({root / SETUP_DONE} exists)", file=sys.stderr)
        return 0
    terminal = terminal_state()
    if terminal == "broken":
        return terminal_failed()
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    console = Console(root, interactive=terminal == "usable")
    try:
        if console.interactive:
            console.say("Fulcrum first-boot setup")
            console.say("========================")
        Setup(root, console, system=not args.no_system).run(load_seed(args, console.say))
    except DoneElsewhere:
        console.say("\nSetup was completed on another console.")
    except Invalid as err:
        # Only without a terminal to ask on: the seed lacks an answer or holds a refused one.
        print(f"fulcrum-setup: {err}; without a terminal the seed must hold every answer", file=sys.stderr)
        return 2
    except EOFError:
        print("fulcrum-setup: the terminal went away; setup not applied", file=sys.stderr)
        return 1
    except OSError as err:
        if err.errno in (errno.EIO, errno.ENXIO) and console.interactive:
            return terminal_failed()
        raise
    return 0


def terminal_failed():
    """A console that cannot be used is no failure: the setup runs on the other one."""
    print(f"fulcrum-setup: {ttyname()} does not answer (no serial port?); the setup runs on the other console",
          file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
