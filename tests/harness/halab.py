"""A two-balancer lab for high availability, in network namespaces (root needed, stdlib only).

::

                       front segment 10.77.1.0/24: bridge br-front in <p>-sw
      [<p>-cl] 10.77.1.2 ----+----------------+-----------------+---- [<p>-gw] 10.77.1.254
                             |                |                      (the witness)
                       f-lb1 |          f-lb2 |        VIPs 10.77.100.0/24 live on the master's
                   eth0 10.77.1.3       eth0 10.77.1.4   eth0: keepalived adds and removes them
                     [<p>-lb1]            [<p>-lb2]      (no local route: a VIP is either there
                   eth1 10.77.2.3       eth1 10.77.2.4   or not)
                             |                |
                       back segment 10.77.2.0/24: bridge br-back in <p>-sw
                 +-----------+-----+----------+-----+
             [<p>-s1] 10.77.2.11  [<p>-s2] 10.77.2.12  [<p>-s3] 10.77.2.13   nginx as in lab.py

    client and gateway: 10.77.100.0/24 on-link via eth0, so they ARP for a VIP and follow the
    gratuitous ARP of whichever balancer takes it. Servers: the back segment only (HAProxy
    connects from the balancer's own back address, so no route back through a VIP is needed).

Three ways to take a balancer off the front segment, each seen differently by keepalived:

- ``cut_link(lb)``: its ``eth0`` down. keepalived sees the interface go (FAULT at once) but
  cannot send its priority-0 advert: the peer waits for the master-down timer.
- ``detach(lb)``: its switch port leaves the bridge. The link stays up, so keepalived sees
  nothing and only the missing adverts (and the witness) tell it anything.
- ``block_vrrp(lb)``: nftables in its namespace drops VRRP (IP protocol 112) both ways, and
  nothing else: a partition between the balancers while the client still reaches both.

Usage::

    with HaLab() as lab:
        lab.holders(lab.vip(10))        # {"lb1"}: who has the address on eth0 now
"""

from __future__ import annotations

import subprocess
import threading
import time

from tests.harness.lab import SERVER_ADDRS, Lab, LabError, add_veth, run_checked

CLIENT_ADDR = "10.77.1.2"
GATEWAY_ADDR = "10.77.1.254"
FRONT_NET = "10.77.1.0/24"
BACK_NET = "10.77.2.0/24"
VIP_NET = "10.77.100.0/24"
BALANCERS = {"lb1": ("10.77.1.3", "10.77.2.3"), "lb2": ("10.77.1.4", "10.77.2.4")}
FRONT_DEV, BACK_DEV = "eth0", "eth1"
# nftables table that block_vrrp() owns in a balancer's namespace (the agent owns inet fulcrum).
PARTITION_TABLE = "fulcrum_lab_partition"


class HaLab(Lab):
    """Client, gateway, switch, two balancers and three nginx servers (see module doc)."""

    ROLES = ("cl", "gw", "sw", *BALANCERS, *SERVER_ADDRS)

    # -- topology ----------------------------------------------------------------------

    @property
    def balancers(self) -> tuple[str, ...]:
        return tuple(BALANCERS)

    @staticmethod
    def front_addr(lb: str) -> str:
        """The balancer's own address on the front (HA) segment."""
        return BALANCERS[lb][0]

    @staticmethod
    def back_addr(lb: str) -> str:
        return BALANCERS[lb][1]

    @property
    def lb_exec_prefix(self) -> list[str]:
        raise LabError("an HA lab has two balancers: use exec_prefix('lb1') or exec_prefix('lb2')")

    def exec_prefix(self, role: str) -> list[str]:
        """argv prefix that runs a command inside ``role``'s namespace."""
        return ["ip", "netns", "exec", self.ns(role)]

    def describe(self) -> dict:
        return {
            "prefix": self.prefix,
            "namespaces": {role: self.ns(role) for role in self.ROLES},
            "client": CLIENT_ADDR,
            "gateway": GATEWAY_ADDR,
            "balancers": {lb: {"front": f, "back": b} for lb, (f, b) in BALANCERS.items()},
            "vip_net": VIP_NET,
            "servers": self.servers,
            "workdir": str(self.workdir) if self.workdir else None,
        }

    def _build_network(self) -> None:
        for role in self.ROLES:
            run_checked(["ip", "netns", "add", self.ns(role)])
            self._ip(role, "link", "set", "lo", "up")
        for bridge in ("br-front", "br-back"):
            self._ip("sw", "link", "add", bridge, "type", "bridge")
            self._ip("sw", "link", "set", bridge, "up")
        self._plug("cl", FRONT_DEV, f"{CLIENT_ADDR}/24", "br-front", "f-cl")
        self._plug("gw", FRONT_DEV, f"{GATEWAY_ADDR}/24", "br-front", "f-gw")
        for role in ("cl", "gw"):
            self._ip(role, "route", "add", VIP_NET, "dev", FRONT_DEV)
        for lb, (front, back) in BALANCERS.items():
            self._plug(lb, FRONT_DEV, f"{front}/24", "br-front", f"f-{lb}")
            self._plug(lb, BACK_DEV, f"{back}/24", "br-back", f"b-{lb}")
        for name, addr in SERVER_ADDRS.items():
            self._plug(name, FRONT_DEV, f"{addr}/24", "br-back", f"b-{name}")

    def _plug(self, role: str, dev: str, cidr: str, bridge: str, port: str) -> None:
        """A veth from ``role``'s ``dev`` (with ``cidr``) to ``port`` on the switch's ``bridge``."""
        add_veth(self.ns(role), dev, self.ns("sw"), port)
        self._ip("sw", "link", "set", port, "master", bridge)
        self._ip("sw", "link", "set", port, "up")
        self._ip(role, "addr", "add", cidr, "dev", dev)
        self._ip(role, "link", "set", dev, "up")

    def _wait_until_serving(self, name: str) -> None:
        """As in Lab, but probed from lb1: the client has no path to the back segment."""
        url = f"http://{SERVER_ADDRS[name]}/health"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self._nginx[name].poll() is not None:
                break
            probe = self.exec("lb1", ["curl", "-sf", "-o", "/dev/null", "--max-time", "1", url], capture_output=True)
            if probe.returncode == 0:
                return
            time.sleep(0.05)
        raise LabError(f"server {name} did not come up within 10s (see {self.workdir}/{name}/error.log)")

    # -- who holds a VIP -----------------------------------------------------------------

    def addresses(self, lb: str) -> set[str]:
        """IPv4 addresses on the balancer's front interface, without prefix."""
        out = self.exec(lb, ["ip", "-o", "-4", "addr", "show", "dev", FRONT_DEV], capture_output=True, text=True)
        return {line.split()[3].split("/")[0] for line in out.stdout.splitlines()}

    def holders(self, vip: str) -> set[str]:
        """The balancers that have ``vip`` on their front interface right now."""
        return {lb for lb in BALANCERS if vip in self.addresses(lb)}

    def wait_for_holders(self, vip: str, want: set[str], timeout: float) -> float:
        """Seconds until exactly ``want`` hold ``vip``; LabError with who holds it after ``timeout``."""
        start = time.monotonic()
        while True:
            held = self.holders(vip)
            if held == want:
                return time.monotonic() - start
            if time.monotonic() - start > timeout:
                raise LabError(f"{vip} held by {sorted(held)} after {timeout}s, want {sorted(want)}")
            time.sleep(0.05)

    def timeline(self, vip: str, interval: float = 0.025) -> HolderTimeline:
        """Who holds ``vip``, sampled in the background while the ``with`` block runs."""
        return HolderTimeline(self, vip, interval)

    # -- faults ------------------------------------------------------------------------

    def cut_link(self, lb: str) -> None:
        """The balancer's front interface down (keepalived sees it)."""
        self._ip(lb, "link", "set", FRONT_DEV, "down")

    def restore_link(self, lb: str) -> None:
        self._ip(lb, "link", "set", FRONT_DEV, "up")

    def detach(self, lb: str) -> None:
        """The balancer's switch port off the front bridge: its link stays up, nothing passes."""
        self._ip("sw", "link", "set", f"f-{lb}", "nomaster")

    def attach(self, lb: str) -> None:
        self._ip("sw", "link", "set", f"f-{lb}", "master", "br-front")

    def block_vrrp(self, lb: str) -> None:
        """Drop VRRP to and from ``lb`` in its namespace; everything else still passes."""
        chains = "".join(
            f"    chain {hook} {{\n        type filter hook {hook} priority 0; policy accept;\n"
            f"        ip protocol vrrp drop\n    }}\n"
            for hook in ("input", "output")
        )
        script = f"table inet {PARTITION_TABLE} {{\n{chains}}}\n"
        proc = self.exec(lb, ["nft", "-f", "-"], input=script, capture_output=True, text=True)
        if proc.returncode != 0:
            raise LabError(f"nft in {lb}: {proc.stderr.strip()}")

    def unblock_vrrp(self, lb: str) -> None:
        self.exec(lb, ["nft", "delete", "table", "inet", PARTITION_TABLE], capture_output=True)

    def vrrp_blocked(self, lb: str) -> bool:
        proc = self.exec(lb, ["nft", "list", "table", "inet", PARTITION_TABLE], capture_output=True)
        return proc.returncode == 0

    def add_client_addresses(self, count: int, first: int = 20) -> list[str]:
        """Extra source addresses on the client (10.77.1.<first>...), for per-source tests."""
        addrs = [f"10.77.1.{first + i}" for i in range(count)]
        for addr in addrs:
            subprocess.run(
                ["ip", "-n", self.ns("cl"), "addr", "replace", f"{addr}/24", "dev", FRONT_DEV],
                check=True,
                capture_output=True,
            )
        return addrs


class HolderTimeline:
    """``[(monotonic time, frozenset of holders)]`` of one VIP, sampled by a thread."""

    def __init__(self, lab: HaLab, vip: str, interval: float):
        self.lab, self.vip, self.interval = lab, vip, interval
        self.samples: list[tuple[float, frozenset[str]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> HolderTimeline:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.monotonic(), frozenset(self.lab.holders(self.vip))))
            self._stop.wait(self.interval)

    def first(self, holders: set[str], after: float = 0.0) -> float | None:
        """When exactly ``holders`` were first seen at or after ``after`` (None: never)."""
        return next((t for t, held in self.samples if t >= after and held == holders), None)

    def ever(self, lb: str, after: float = 0.0, before: float = float("inf")) -> list[float]:
        """Sample times at which ``lb`` held the VIP within [after, before]."""
        return [t for t, held in self.samples if after <= t <= before and lb in held]

    def changes(self, since: float = 0.0) -> list[tuple[float, list[str]]]:
        """``[(seconds after since, sorted holders)]`` at each change: for messages."""
        out, last = [], None
        for t, held in self.samples:
            if t >= since and held != last:
                out.append((round(t - since, 3), sorted(held)))
                last = held
        return out
