"""Upgrading a running appliance keeps its configuration and its live service.

After test_image.py (file-name order: same booted appliance, its services applied): build
every package again from this tree with a higher version, copy them in, ``apt-get install``
them while a client in the guest sends a request every 0.2 s through the L7 VIP, then check
that nothing failed, the database kept the configuration (the same backup bytes) and every revision, HAProxy was never
restarted (same master process), the upgraded API and agent run, and a new change still
applies and carries traffic.
"""

import calendar
import os
import subprocess
import time

from tests.vm.image.appliance import REPO
from tests.vm.image.conftest import ARTIFACTS
from tests.vm.image.test_image import L7_VIP, client_get

ANSWER_LIMIT_S = 10  # a request not answered in this long has failed
SLOW_S = 1.0  # answers slower than this get their context in the artifacts
PACKAGES = ("fulcrum-api", "fulcrum-console", "fulcrum-agent", "fulcrum-cli", "fulcrum-loadd", "ip-vs-dllc-dkms",
            "fulcrum-appliance")  # fmt: skip


def installed_versions(appliance):
    out = appliance.ssh("dpkg-query -W -f '${Package} ${Version}\\n' " + " ".join(PACKAGES)).stdout
    return dict(line.split() for line in out.splitlines())


def haproxy_master(appliance):
    return appliance.ssh("pgrep -o -x haproxy").stdout.strip()


def upgrade_context(appliance, started, requests):
    """Each of the requests, with what dpkg and the journal logged from 3 s before it began
    to 5 s after (the whole journal is kept in the artifacts)."""
    dpkg = appliance.ssh("cat /var/log/dpkg.log").stdout.splitlines()
    journal = appliance.ssh(f"journalctl -o short-unix --no-hostname --since @{int(started)}").stdout.splitlines()
    (ARTIFACTS / "upgrade-journal.log").write_text("\n".join(journal) + "\n")
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


def test_upgrade_keeps_the_database_and_the_live_service(appliance, services):
    api = services["api"]
    before = installed_versions(appliance)
    assert set(before) == set(PACKAGES), before
    newer = before["fulcrum-api"] + "+upgrade1"
    out = REPO / "images" / ".build" / "upgrade-debs"  # beside the .debs (built ahead by tests/run-tiers.sh)
    subprocess.run(
        [str(REPO / "appliance" / "debian" / "build.sh")],
        env={**os.environ, "FULCRUM_VERSION": newer, "FULCRUM_DEB_OUT": str(out)},
        check=True,
    )
    debs = sorted(out.glob(f"*_{newer.split(':')[-1]}_*.deb"))
    assert {d.name.split("_")[0] for d in debs} == set(PACKAGES), debs

    # The backup is the whole configuration, the same bytes for the same configuration.
    backup = api.get("/api/v1/backup/").content
    members = api.get("/api/v1/members/").json()["results"]
    revisions = api.get("/api/v1/revisions/").json()["count"]
    master = haproxy_master(appliance)
    api_pid = appliance.ssh("systemctl show -P MainPID fulcrum-api").stdout.strip()

    appliance.ssh("rm -rf /root/upgrade && mkdir /root/upgrade")
    appliance.scp(debs, "/root/upgrade/")
    # A request every 0.2 s through the VIP for as long as the upgrade runs; one line per answer:
    # when it started (epoch seconds), then the server's name and curl's connect and total
    # times, or the failure with curl's exit status (7: refused, 52: closed without an answer,
    # 56: reset, 28: no answer in 10 s). A failure fails the test; a slow answer is measured:
    # under emulation on a loaded host, answers take up to 1.5 s while dpkg unpacks and DKMS
    # builds (the guest's two CPUs are busy), which says nothing about the service.
    started = float(appliance.ssh("date +%s.%N").stdout)
    appliance.ssh(
        "rm -f /root/during; setsid -f sh -c 'while [ ! -e /root/upgrade/done ]; do t=$(date +%s.%N); "
        f'a=$(ip netns exec fc-client curl -s -m {ANSWER_LIMIT_S} -w " %{{time_connect}} %{{time_total}}" '
        f"http://{L7_VIP}/) || a=FAILED:curl-exit-$?; "
        'echo "$t" $a >>/root/during; sleep 0.2; done\' >/dev/null 2>&1'
    )
    install = appliance.ssh(
        "DEBIAN_FRONTEND=noninteractive apt-get install -y /root/upgrade/*.deb; status=$?; "
        "touch /root/upgrade/done; exit $status",
        timeout=1800,
    )
    (ARTIFACTS / "upgrade-apt.log").write_text(install.stdout + install.stderr)
    during = [line.split(None, 1) for line in appliance.ssh("sleep 1; cat /root/during").stdout.splitlines()]
    (ARTIFACTS / "upgrade-client.log").write_text("".join(f"{t} {answer}\n" for t, answer in during))

    assert installed_versions(appliance) == dict.fromkeys(PACKAGES, newer)
    assert len(during) >= 10, during  # the client really ran through the upgrade
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
        f.write(f"TIMING upgrade under traffic: {len(during)} requests, {len(failed)} failed, answers {times}\n")
    if failed or slowest:  # what dpkg and the journal logged around them, for whoever reads the artifacts
        (ARTIFACTS / "upgrade-slowest.log").write_text(upgrade_context(appliance, started, failed + slowest) + "\n")
    assert not failed, (ARTIFACTS / "upgrade-slowest.log").read_text()
    assert haproxy_master(appliance) == master, "HAProxy was restarted by the upgrade"
    appliance.wait_until(
        lambda: appliance.ssh("systemctl is-active fulcrum-api fulcrum-agent", check=False).returncode == 0,
        300, "the upgraded API and agent",
    )  # fmt: skip
    assert appliance.ssh("systemctl show -P MainPID fulcrum-api").stdout.strip() != api_pid, "the API kept old code"
    assert api.get("/api/v1/revisions/").json()["count"] == revisions
    assert api.get("/api/v1/backup/").content == backup

    # The upgraded stack still changes things: drain s2, apply, all traffic to s1.
    s2 = next(m for m in members if m["name"] == "s2" and m["port"] == 80)
    assert api.patch(f"/api/v1/members/{s2['id']}/", json={"state": "drain"}).status_code == 200
    answer = api.post("/api/v1/revisions/", json={"message": "after upgrade"})
    assert answer.status_code == 201, answer.text
    appliance.wait_until(
        lambda: set(client_get(appliance, f"http://{L7_VIP}/", 4)) == {"s1"}, 180, "s2 drained after the upgrade"
    )
    started = appliance.ssh("journalctl -b -u fulcrum-agent -o cat | grep 'fulcrum-agent starting' | tail -1").stdout
    assert f"version={newer}" in started, started  # the agent running now is the new build
