"""A rolling upgrade of the pair keeps its configuration, its live service and its management.

After test_join.py (file-name order): one appliance is the primary at the management VIP,
the other its synchronous standby, both carrying the cluster's services. Every package is
built again from this tree with a higher version, but for ip-vs-dllc-dkms, whose module did
not change (its version is the module's own: apt leaves it, and DKMS does not build it
again); then, as an operator would: upgrade the standby, switch over to it (through the
API), upgrade the other.
Throughout, a client in each guest sends a request every 0.2 s through its L7 VIP, and an
operator's change goes to the management VIP every second. Then: no request failed on
either, no acknowledged change is lost (how long the VIP took none is measured: the
switchovers), the database kept the configuration (the same backup bytes) and every
revision, HAProxy was never restarted on either (same master process), the upgraded APIs and
agents run, and a new change still applies and carries traffic on both.
"""

import calendar
import itertools
import json
import os
import subprocess
import time

from tests.vm.image.appliance import MGMT, MGMT_VIP, REPO
from tests.vm.image.conftest import ARTIFACTS, JOINED, publish, replication_state, wait_applied
from tests.vm.image.test_image import L7_VIP, client_get, vip_client
from tests.vm.image.test_join import ChangeLoop, holders, management_story, member_id

ANSWER_LIMIT_S = 10  # a request not answered in this long has failed
SLOW_S = 1.0  # answers slower than this get their context in the artifacts
PACKAGES = ("fulcrum-api", "fulcrum-console", "fulcrum-agent", "fulcrum-cli", "fulcrum-loadd", "ip-vs-dllc-dkms",
            "fulcrum-appliance")  # fmt: skip
DLLC = "ip-vs-dllc-dkms"  # its version is the module's own: an upgrade that leaves the module alone leaves it
STOP = "/root/upgrade/stop"  # the guest's client loop runs until this file exists


def installed_versions(box):
    out = box.ssh("dpkg-query -W -f '${Package} ${Version}\\n' " + " ".join(PACKAGES)).stdout
    return dict(line.split() for line in out.splitlines())


def built_module(box):
    """When DKMS last built ip_vs_dllc for the running kernel (its module file's time)."""
    return box.ssh("stat -c %Y /lib/modules/$(uname -r)/updates/dkms/ip_vs_dllc.ko*").stdout.strip()


def haproxy_master(box):
    return box.ssh("pgrep -o -x haproxy").stdout.strip()


def upgrade_context(box, started, requests):
    """Each of the requests, with what dpkg and the journal logged from 3 s before it began
    to 5 s after (the whole journal is kept in the artifacts)."""
    dpkg = box.ssh("cat /var/log/dpkg.log").stdout.splitlines()
    journal = box.ssh(f"journalctl -o short-unix --no-hostname --since @{int(started)}").stdout.splitlines()
    (ARTIFACTS / f"upgrade-journal-{box.address}.log").write_text("\n".join(journal) + "\n")
    stamped = []
    for line in dpkg:  # "2026-11-28 10:01:02 status ...", in the guest's local time: UTC
        try:
            stamped.append((calendar.timegm(time.strptime(line[:19], "%Y-%m-%d %H:%M:%S")), "dpkg " + line[20:]))
        except ValueError:
            continue
    for line in journal:
        try:
            stamped.append((float(line.split(None, 1)[0]), line.split(None, 1)[1]))
        except (ValueError, IndexError):
            continue
    report = []
    for t, what in requests:
        report.append(f"{what} (began {t:.1f})")
        report += [f"  {s - t:+6.1f}s {line}" for s, line in sorted(stamped) if t - 3 <= s <= t + 5]
    return "\n".join(report)


def start_client(box, debs):
    """The packages copied in, and a request every 0.2 s through the guest's L7 VIP until STOP;
    one line per answer: when it started (epoch seconds), then the server's name and curl's
    connect and total times, or the failure with curl's exit status (7: refused, 52: closed
    without an answer, 56: reset, 28: no answer in 10 s). A failure fails the test; a slow
    answer is measured: under emulation on a loaded host, answers take up to 1.5 s while dpkg
    unpacks and the byte-code is compiled (the guest's two CPUs are busy), which says nothing
    about the service. Returns when the loop started (the guest's clock)."""
    box.ssh("rm -rf /root/upgrade /root/during && mkdir /root/upgrade")
    box.scp(debs, "/root/upgrade/")
    started = float(box.ssh("date +%s.%N").stdout)
    box.ssh(
        f"setsid -f sh -c 'while [ ! -e {STOP} ]; do t=$(date +%s.%N); "
        f'a=$(ip netns exec fc-client curl -s -m {ANSWER_LIMIT_S} -w " %{{time_connect}} %{{time_total}}" '
        f"http://{L7_VIP}/) || a=FAILED:curl-exit-$?; "
        'echo "$t" $a >>/root/during; sleep 0.2; done\' >/dev/null 2>&1'
    )
    return started


def install(box):
    done = box.ssh("DEBIAN_FRONTEND=noninteractive apt-get install -y /root/upgrade/*.deb", timeout=1800, check=False)
    (ARTIFACTS / f"upgrade-apt-{box.address}.log").write_text(done.stdout + done.stderr)
    assert done.returncode == 0, done.stderr[-2000:]


def client_results(box, started):
    """The guest's client: (requests, failures); slow answers and failures in context in the artifacts."""
    box.ssh(f"touch {STOP}; sleep 1")
    during = [line.split(None, 1) for line in box.ssh("cat /root/during").stdout.splitlines()]
    (ARTIFACTS / f"upgrade-client-{box.address}.log").write_text("".join(f"{t} {answer}\n" for t, answer in during))
    failed, answered = [], []  # (start, which and why); (total time, start)
    for i, (t, answer) in enumerate(during):
        if answer.split()[0] in ("s1", "s2"):
            answered.append((float(answer.split()[-1]), float(t)))
        else:
            failed.append((float(t), f"{i + 1} of {len(during)}: {answer}"))
    answered.sort()
    slowest = [(t, f"answered in {total:.2f} s") for total, t in answered[-3:] if total >= SLOW_S]
    times = f"median {answered[len(answered) // 2][0]:.2f} s, slowest {answered[-1][0]:.2f} s" if answered else "none"
    with open(ARTIFACTS / "timings.txt", "a") as f:
        f.write(
            f"TIMING rolling upgrade, {box.address}: {len(during)} requests, {len(failed)} failed, answers {times}\n"
        )
    if failed or slowest:  # what dpkg and the journal logged around them, for whoever reads the artifacts
        context = upgrade_context(box, started, failed + slowest)
        (ARTIFACTS / f"upgrade-slowest-{box.address}.log").write_text(context + "\n")
    return during, failed


def switch_over(at_vip, to, holder):
    asked = at_vip.post("/api/v1/cluster/switchover/")
    assert asked.status_code == 202 and asked.json()["standby"] == to, asked.text
    holder.wait_until(lambda: holders((holder,), MGMT_VIP), 120, f"{to} holds the management VIP",
                      explain=lambda: management_story((holder,)))  # fmt: skip
    return holder.wait_until(lambda: replication_state(at_vip, "synchronous"), 300, f"synchronous, {to} the primary",
                             explain=lambda: management_story((holder,)))  # fmt: skip


def test_a_rolling_upgrade_keeps_the_pair_its_database_and_its_live_service(appliance, joined, services):
    box, api = joined["box"], services["api"]
    at_vip = vip_client(api)
    pair = (appliance, box)
    names = {appliance.address: appliance.hostname, box.address: JOINED}
    primary, standby = (appliance, box) if holders(pair, MGMT_VIP) == {MGMT} else (box, appliance)
    assert holders(pair, MGMT_VIP) == {primary.address}
    appliance.wait_until(lambda: replication_state(at_vip, "synchronous"), 120, "the pair synchronous")
    before = {b.address: installed_versions(b) for b in pair}
    assert all(set(v) == set(PACKAGES) for v in before.values()), before
    newer = before[MGMT]["fulcrum-api"] + "+upgrade1"
    out = REPO / "images" / ".build" / "upgrade-debs"  # beside the .debs (built ahead by tests/run-tiers.sh)
    subprocess.run(
        [str(REPO / "appliance" / "debian" / "build.sh")],
        env={**os.environ, "FULCRUM_VERSION": newer, "FULCRUM_DEB_OUT": str(out)},
        check=True,
    )
    # The module did not change: its package keeps its version (which the operator's apt then
    # leaves alone), and DKMS does not build it again.
    module = before[MGMT][DLLC]
    assert before[box.address][DLLC] == module, before
    debs = sorted(out.glob(f"*_{newer}_*.deb")) + sorted(out.glob(f"{DLLC}_{module.split(':')[-1]}_*.deb"))
    assert {d.name.split("_")[0] for d in debs} == set(PACKAGES), debs
    modules = {b.address: built_module(b) for b in pair}

    # The backup is the whole configuration, the same bytes for the same configuration.
    backup = at_vip.get("/api/v1/backup/").content
    s2 = member_id(at_vip, "web", "s2")  # the L7 VIP's pool (the pools are listed by name: "sticky" < "web")
    revisions = at_vip.get("/api/v1/revisions/").json()["count"]
    masters = {b.address: haproxy_master(b) for b in pair}
    api_pids = {b.address: b.ssh("systemctl show -P MainPID fulcrum-api").stdout.strip() for b in pair}

    started = {b.address: start_client(b, debs) for b in pair}
    with ChangeLoop(at_vip, interval=1.0, timeout=5.0) as changes:
        t0 = time.monotonic()
        install(standby)
        switch_over(at_vip, names[standby.address], standby)
        install(primary)  # now the standby
        state = standby.wait_until(
            lambda: replication_state(at_vip, "synchronous"), 300, "synchronous after the upgrade"
        )
        took = time.monotonic() - t0
        time.sleep(2)
    results = {b.address: client_results(b, started[b.address]) for b in pair}

    # Management: the VIP took changes before, between and after; none acknowledged is lost.
    assert [s["name"] for s in state["standbys"]] == [names[primary.address]], state
    acknowledged = changes.acknowledged()
    names = {p["name"] for p in at_vip.get("/api/v1/pools/", params={"limit": 1000}).json()["results"]}
    lost = sorted(set(acknowledged) - names)
    times = sorted(t for t, _name, status in changes.records if status == 201)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    figures = {
        "upgrade_s": round(took, 1), "changes_sent": len(changes.records), "changes_acknowledged": len(acknowledged),
        "changes_lost": len(lost), "longest_without_an_acknowledged_change_s": round(max(gaps, default=0), 3),
        "requests": {address: len(during) for address, (during, _failed) in results.items()},
        "failed": {address: len(failed) for address, (_during, failed) in results.items()},
    }  # fmt: skip
    (ARTIFACTS / "pair").mkdir(exist_ok=True)
    (ARTIFACTS / "pair" / "pair-upgrade.json").write_text(json.dumps(figures, indent=1) + "\n")
    print(f"the pair's rolling upgrade: {figures}")
    assert acknowledged and lost == [], figures
    for pool in at_vip.get("/api/v1/pools/", params={"limit": 1000}).json()["results"]:
        if pool["name"].startswith("ack-"):
            assert at_vip.delete(f"/api/v1/pools/{pool['id']}/").status_code == 204

    # Traffic: every request on either appliance answered, by the same HAProxy.
    for b in pair:
        during, failed = results[b.address]
        assert len(during) >= 10, during  # the client really ran through the upgrade
        assert not failed, (ARTIFACTS / f"upgrade-slowest-{b.address}.log").read_text()
        assert installed_versions(b) == {**dict.fromkeys(PACKAGES, newer), DLLC: module}
        assert built_module(b) == modules[b.address], f"DKMS built ip_vs_dllc again on {b.address}"
        assert haproxy_master(b) == masters[b.address], f"HAProxy was restarted by the upgrade on {b.address}"
        b.wait_until(lambda b=b: b.ssh("systemctl is-active fulcrum-api fulcrum-agent", check=False).returncode == 0,
                     300, f"the upgraded API and agent on {b.address}")  # fmt: skip
        assert b.ssh("systemctl show -P MainPID fulcrum-api").stdout.strip() != api_pids[b.address], "old code"
        started_line = b.ssh("journalctl -b -u fulcrum-agent -o cat | grep 'fulcrum-agent starting' | tail -1").stdout
        assert f"version={newer}" in started_line, started_line  # the agent running now is the new build
    assert at_vip.get("/api/v1/revisions/").json()["count"] == revisions
    assert at_vip.get("/api/v1/backup/").content == backup

    # The upgraded pair still changes things: drain s2, apply, all traffic to s1 on both.
    assert at_vip.patch(f"/api/v1/members/{s2}/", json={"state": "drain"}).status_code == 200
    number = publish(at_vip, "after the rolling upgrade")
    wait_applied(appliance, at_vip, number, "after the upgrade", nodes=(appliance.hostname, JOINED))
    for b in pair:
        b.wait_until(
            lambda b=b: set(client_get(b, f"http://{L7_VIP}/", 4)) == {"s1"}, 180, f"s2 drained on {b.address}"
        )
