"""One booted Fulcrum appliance image under QEMU (TCG), for the image acceptance tests.

The image is never written to: the guest runs on a qcow2 overlay in the work folder, so a
reboot keeps what the first boot did (keys, database) and the next test run starts from
the image as shipped. The guest gets

- its serial console on a Unix socket (driven with pexpect: the first-boot setup) and in
  ``serial.log``; a second serial port (ttyS1) to ``journal.log``, where the guest's journal
  goes once ``forward_journal()`` has run: what it logged up to a hang or a lost network,
- its management NIC on the management segment (``Segment``): a bridge in a network namespace
  the tests make, shared by every appliance of the run, which the host reaches as the
  gateway 10.0.2.2 through a veth pair. The first appliance's address is 10.0.2.15/24; the
  tests reach SSH, the console and the API there, and the appliances reach each other
  directly, as two appliances on one management network do (the join, the replicated
  database),
- a seed disk (label FULCRUM-SEED) carrying ``root_authorized_keys``: a key the tests made,
  so that they can build namespaces and send traffic inside the guest. The first appliance's
  setup answers are typed on the serial console, as an operator would; a second one's come
  from ``setup.conf`` on the same disk (``prepare(setup_conf=...)``), unattended.
"""

import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pexpect
import pexpect.fdpexpect
import requests
import urllib3

from tests.harness.stack import ApiClient

REPO = Path(__file__).resolve().parents[3]
MGMT = "10.0.2.15"
MGMT_VIP = "10.0.2.10"  # the cluster's management VIP: the first appliance's setup gives it
PREFIX = 24
GATEWAY = "10.0.2.2"
DNS = "10.0.2.3"
MAC = "52:54:00:f0:c0:01"  # the first appliance's management NIC; each has its own
SEGMENT = "fulcrum-image-seg"  # the namespace of the management segment's bridge
HOST_LINK = "fulcrum-seg0"  # the host's end of the segment (the gateway's address)
CLIENT = "10.0.2.50"  # a client on the segment: the bridge's own address, in its namespace
SSH_OPTIONS = [
    "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
    "-o", "ConnectTimeout=20", "-o", "ServerAliveInterval=15",
]  # fmt: skip
# forward_journal: the journal to ttyS1 (journal.log) as journald's console forwarding wrote it
# ([monotonic seconds] identifier[pid]: message), info and above.
JOURNAL_UNIT = "fulcrum-test-journal-ttyS1.service"
JOURNAL_UNIT_TEXT = """[Unit]
Description=Fulcrum tests: the journal to ttyS1 (journal.log)
[Service]
ExecStart=/bin/sh -c 'exec journalctl -b -f -n all -p info -o short-monotonic --no-hostname >/dev/ttyS1'
Restart=always
[Install]
WantedBy=multi-user.target
"""


def ip(*argv, check=True):
    return subprocess.run(["ip", *argv], check=check, capture_output=True, text=True)


def run_text(argv):
    """What ``argv`` printed (stdout and stderr), for a diagnostic report."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    return f"$ {' '.join(argv)}\n{done.stdout}{done.stderr}"


booted = []  # the appliances running now: a failing test reports on each (conftest.py)


class Segment:
    """The appliances' management network: bridge ``br0`` in namespace ``SEGMENT``, the host on
    it as ``GATEWAY`` (veth ``HOST_LINK``), each appliance's NIC a tap on the bridge
    (``tap(name)``; QEMU runs in the namespace to open it). The namespace itself is a client
    on the segment (``CLIENT``), for traffic to addresses that move between the appliances."""

    def __init__(self, name=SEGMENT):
        self.name = name

    def create(self):
        self.remove()
        ip("netns", "add", self.name)
        ip("-n", self.name, "link", "add", "br0", "type", "bridge", "forward_delay", "0")
        ip("-n", self.name, "link", "set", "br0", "up")
        ip("-n", self.name, "addr", "add", f"{CLIENT}/{PREFIX}", "dev", "br0")
        ip("-n", self.name, "link", "set", "lo", "up")
        ip("link", "add", HOST_LINK, "type", "veth", "peer", "name", "uplink", "netns", self.name)
        ip("-n", self.name, "link", "set", "uplink", "master", "br0", "up")
        ip("addr", "add", f"{GATEWAY}/{PREFIX}", "dev", HOST_LINK)
        ip("link", "set", HOST_LINK, "up")
        return self

    def tap(self, name):
        """A tap on the bridge (kept when its QEMU quits: an appliance booted again reuses it)."""
        if ip("-n", self.name, "link", "show", name, check=False).returncode != 0:
            ip("-n", self.name, "tuntap", "add", "dev", name, "mode", "tap")
        ip("-n", self.name, "link", "set", name, "master", "br0", "up")
        return name

    def remove(self):
        ip("link", "del", HOST_LINK, check=False)
        ip("netns", "del", self.name, check=False)

    def cut(self, *rules):
        """A partition on the segment: each rule (nft, of a bridge forward chain, e.g.
        ``iifname "tap-01" oifname "tap-02" drop``) drops frames between the bridge's ports:
        the appliances' taps and ``uplink``, the host's link (the gateway, the witness)."""
        script = "add table bridge fulcrum_cut\nadd chain bridge fulcrum_cut forward { type filter hook forward priority 0; }\n"
        script += "".join(f"add rule bridge fulcrum_cut forward {rule}\n" for rule in rules)
        subprocess.run(["ip", "netns", "exec", self.name, "nft", "-f", "-"], input=script, text=True, check=True)

    def heal(self):
        subprocess.run(["ip", "netns", "exec", self.name, "nft", "delete", "table", "bridge", "fulcrum_cut"], check=False,
                       capture_output=True)  # fmt: skip

    def report(self):
        """The segment as the host sees it: links, the bridge's ports and learnt MACs, ARP."""
        return "".join(
            run_text(argv)
            for argv in (
                ["ip", "-br", "addr", "show", "dev", HOST_LINK],
                ["ip", "neigh", "show", "dev", HOST_LINK],
                ["ip", "-n", self.name, "-br", "link"],
                ["bridge", "-n", self.name, "link"],
                ["bridge", "-n", self.name, "fdb", "show", "br", "br0", "dynamic"],
                ["ip", "-n", self.name, "neigh"],
            )
        )


class Appliance:
    """A Fulcrum image booted under QEMU; ``boot()``, ``setup()``, then ssh/api; ``stop()``."""

    def __init__(self, image, workdir, segment, memory_mib=3072, cpus=2, address=MGMT, mac=MAC):
        self.image = Path(image)
        self.address = address  # its management address, on the segment
        self.mac = mac
        self.segment = segment
        self.workdir = Path(workdir)
        self.memory_mib = memory_mib
        self.cpus = cpus
        self.qemu = None
        self.serial = None
        self._sock = None
        self.boot_seconds = None
        self.key = self.workdir / "id_ed25519"

    # -- lifecycle -----------------------------------------------------------------------

    def prepare(self, setup_conf=None):
        """The overlay disk, a test SSH key and the seed disk holding it (and ``setup_conf``)."""
        if self.workdir.exists():
            shutil.rmtree(self.workdir)
        self.workdir.mkdir(parents=True)
        subprocess.run(
            ["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", str(self.image.resolve()),
             str(self.workdir / "disk.qcow2")],
            check=True,
        )  # fmt: skip
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key)], check=True)
        seed = self.workdir / "seed"
        seed.mkdir()
        shutil.copy(f"{self.key}.pub", seed / "root_authorized_keys")
        if setup_conf is not None:
            (seed / "setup.conf").write_text(setup_conf)
        subprocess.run(
            ["xorriso", "-as", "mkisofs", "-quiet", "-V", "FULCRUM-SEED", "-J", "-r", "-o",
             str(self.workdir / "seed.iso"), str(seed)],
            check=True,
        )  # fmt: skip

    def boot(self, console=True):
        """Start QEMU and attach to the serial console; ``console=False`` (an unattended setup
        from the seed): the console only goes to serial.log."""
        sock = self.workdir / "serial.sock"
        if console:
            serial = ["-chardev", f"socket,id=ser0,path={sock},server=on,wait=off,logfile={self.workdir / 'serial.log'}",
                      "-serial", "chardev:ser0"]  # fmt: skip
        else:  # appended to: an appliance booted again keeps its first boot's console
            serial = [
                "-chardev",
                f"file,id=ser0,path={self.workdir / 'serial.log'},append=on",
                "-serial",
                "chardev:ser0",
            ]
        tap = self.segment.tap(self.tap)
        argv = [
            "ip", "netns", "exec", self.segment.name,
            # One host thread for both vCPUs (thread=single), as tests/vm/run.sh: with a thread
            # each, a vCPU may run stale translated code while the kernel patches its text
            # (static keys, text_poke_bp): "Oops: int3" and a panic, minutes into a run (seen
            # in netif_rx_internal under HAProxy's sends).
            "qemu-system-x86_64", "-accel", "tcg,thread=single", "-m", str(self.memory_mib), "-smp", str(self.cpus),
            "-display", "none",
            "-drive", f"file={self.workdir / 'disk.qcow2'},format=qcow2,if=virtio",
            "-drive", f"file={self.workdir / 'seed.iso'},format=raw,if=virtio,readonly=on",
            "-netdev", f"tap,id=n0,ifname={tap},script=no,downscript=no",
            "-device", f"virtio-net-pci,netdev=n0,mac={self.mac}",
            *serial,
            "-chardev", f"file,id=jrn0,path={self.workdir / 'journal.log'},append=on", "-serial", "chardev:jrn0",
            "-monitor", f"unix:{self.workdir / 'monitor.sock'},server,nowait",
        ]  # fmt: skip
        self.started = time.monotonic()
        with open(self.workdir / "qemu.log", "wb") as log:
            self.qemu = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        if self not in booted:  # booted again after a power-off
            booted.append(self)
        if not console:
            return
        deadline = time.monotonic() + 30
        while not sock.exists():
            if self.qemu.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"qemu did not start: {(self.workdir / 'qemu.log').read_text()}")
            time.sleep(0.1)
        self._sock = socket.socket(socket.AF_UNIX)
        self._sock.connect(str(sock))
        self.serial = pexpect.fdpexpect.fdspawn(self._sock.fileno(), encoding="utf-8", codec_errors="replace",
                                                timeout=60)  # fmt: skip
        # What the driver read, as it read it (serial.log has the whole console); closed in stop().
        self.serial.logfile_read = open(self.workdir / "serial-driver.log", "a")  # noqa: SIM115

    def drain_console(self):
        """Once nothing more is typed on the serial console, read it on, and drop what comes
        (serial.log has it: QEMU logs what passes). Unread, the socket fills after a few
        hundred bytes (one buffer per byte the UART sends), the guest's UART stops, and
        whatever the guest writes to its console waits: its kernel's messages, a panic's
        among them, never reach serial.log."""
        sock = self._sock

        def drain():
            try:
                while sock.recv(65536):
                    pass
            except OSError:
                pass  # closed by stop()

        threading.Thread(target=drain, name=f"console of {self.address}", daemon=True).start()

    @property
    def tap(self):
        """Its NIC's port on the segment's bridge."""
        return f"tap-{self.mac[-2:]}"

    def stop(self):
        """The end of the guest: its disk is a throwaway overlay, so QEMU is killed rather than
        waited for through a shutdown under emulation (tens of seconds each, for nothing)."""
        if self in booted:
            booted.remove(self)
        if self.qemu and self.qemu.poll() is None:
            self.qemu.kill()
            self.qemu.wait()
        if self._sock:
            self._sock.close()
        if self.serial:
            self.serial.logfile_read.close()

    def power_off(self):
        """Pull the plug: QEMU quits at once (no shutdown, nothing flushed, no VRRP goodbye)."""
        with socket.socket(socket.AF_UNIX) as monitor:
            monitor.settimeout(30)
            monitor.connect(str(self.workdir / "monitor.sock"))
            monitor.recv(4096)  # the monitor's greeting: it reads commands from now on
            monitor.sendall(b"quit\n")
            self.qemu.wait(timeout=30)  # the socket stays open until QEMU has read the command

    def serial_log(self, tail=60, name="serial.log"):
        path = self.workdir / name
        lines = path.read_text(errors="replace").splitlines() if path.exists() else []
        return "\n".join(lines[-tail:])

    def forward_journal(self):
        """From now on (and after reboots) the guest's journal also goes to ttyS1: journal.log,
        each boot's from its start. A unit of the tests' follows it with journalctl; journald is
        left alone. Its ForwardToConsole needs journald restarted, and lines logged meanwhile
        can miss ``journalctl -u``, which tests read: a unit started during a restart lacked
        systemd's "Started" line, and twice a joining appliance's API start (SSH answers as its
        join begins) lacked fulcrum-api-init's lines."""
        self.ssh(
            f"cat >/etc/systemd/system/{JOURNAL_UNIT} && systemctl enable --now {JOURNAL_UNIT}",
            input=JOURNAL_UNIT_TEXT,
        )

    def report(self):
        """What a failing test shows about this appliance: QEMU, its logs' tails, the segment,
        whether it answers from the host."""
        running = (
            "running" if self.qemu and self.qemu.poll() is None else f"exited {self.qemu and self.qemu.returncode}"
        )
        return (
            f"qemu: {running}\n---- journal.log (tail) ----\n{self.serial_log(150, 'journal.log')}\n"
            f"---- serial.log (tail) ----\n{self.serial_log(20)}\n---- the segment ----\n{self.segment.report()}"
            + run_text(["ping", "-c", "2", "-W", "1", self.address])
        )

    # -- talking to the guest --------------------------------------------------------------

    def ssh_argv(self, user="root", tty=False):
        argv = ["ssh", *SSH_OPTIONS]
        if user == "root":
            argv += ["-i", str(self.key), "-o", "IdentitiesOnly=yes", "-o", "PasswordAuthentication=no"]
        else:
            argv += ["-o", "PubkeyAuthentication=no", "-o", "PreferredAuthentications=password,keyboard-interactive"]
        if tty:
            argv.append("-tt")
        return [*argv, f"{user}@{self.address}"]

    def ssh(self, command, check=True, timeout=300, input=None):
        """Run a shell command as root in the guest; return the CompletedProcess (text)."""
        result = subprocess.run([*self.ssh_argv(), command], capture_output=True, text=True, timeout=timeout,
                                input=input)  # fmt: skip
        if check and result.returncode != 0:
            raise AssertionError(f"guest: {command!r} -> {result.returncode}\n{result.stdout}\n{result.stderr}")
        return result

    def scp(self, sources, target):
        subprocess.run(
            ["scp", *SSH_OPTIONS, "-i", str(self.key), "-o", "IdentitiesOnly=yes", *map(str, sources),
             f"root@{self.address}:{target}"],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip

    def wait_for_ssh(self, timeout=600):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.ssh("true", check=False, timeout=30).returncode == 0:
                    return
            except subprocess.TimeoutExpired:
                pass
            time.sleep(3)
        raise TimeoutError(f"no SSH in {timeout}s; serial console:\n{self.serial_log()}")

    @property
    def url(self):
        return f"https://{self.address}"

    def api(self, username, password):
        """An ApiClient on the console's HTTPS with a token got by signing in (as the CLI does)."""
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        answer = requests.post(f"{self.url}/api/v1/auth/token/", json={"username": username, "password": password,
                               "name": "image-acceptance"}, verify=False, timeout=60)  # fmt: skip
        if answer.status_code != 201:
            raise AssertionError(f"sign-in: {answer.status_code} {answer.text}")
        client = ApiClient(self.url, answer.json()["token"])
        client.verify = False  # the console's certificate is self-signed; the tests compare it with the guest's file
        client.trust_env = False  # else REQUESTS_CA_BUNDLE, where set, would turn verification back on
        return client

    def wait_until(self, predicate, timeout, what, interval=2, explain=None):
        """``predicate``'s first truthy value within ``timeout`` s; else a TimeoutError naming
        ``what``, the last value, and what ``explain()`` tells (the guests' side of it)."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                last = predicate()
                if last:
                    return last
            except (requests.RequestException, subprocess.TimeoutExpired, AssertionError) as err:
                last = err
            time.sleep(interval)
        told = ""
        if explain:
            try:
                told = "\n" + explain()
            except Exception as err:  # a guest that does not answer says so
                told = f"\n(no more to tell: {err!r})"
        raise TimeoutError(f"{what}: not within {timeout}s (last: {last}){told}")
