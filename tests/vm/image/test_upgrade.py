"""Upgrading a running appliance keeps its configuration and its live service.

After test_image.py (file-name order: same booted appliance, its services applied): build
every package again from this tree with a higher version, copy them in, ``apt-get install``
them while a client in the guest sends a request every 0.2 s through the L7 VIP, then check
that nothing failed, the database kept the configuration (the same backup bytes) and every revision, HAProxy was never
restarted (same master process), the upgraded API and agent run, and a new change still
applies and carries traffic.
"""

import os
import subprocess

from tests.vm.image.appliance import REPO
from tests.vm.image.conftest import ARTIFACTS
from tests.vm.image.test_image import L7_VIP, client_get

PACKAGES = ("fulcrum-api", "fulcrum-console", "fulcrum-agent", "fulcrum-cli", "fulcrum-loadd", "ip-vs-dllc-dkms",
            "fulcrum-appliance")  # fmt: skip


def installed_versions(appliance):
    out = appliance.ssh("dpkg-query -W -f '${Package} ${Version}\\n' " + " ".join(PACKAGES)).stdout
    return dict(line.split() for line in out.splitlines())


def haproxy_master(appliance):
    return appliance.ssh("pgrep -o -x haproxy").stdout.strip()


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
    # A request every 0.2 s through the VIP for as long as the upgrade runs; one line per answer.
    appliance.ssh(
        "rm -f /root/during; setsid -f sh -c 'while [ ! -e /root/upgrade/done ]; do "
        f"ip netns exec fc-client curl -s -m 2 http://{L7_VIP}/ >>/root/during || echo FAILED:curl-exit-$? >>/root/during; "
        "sleep 0.2; done' >/dev/null 2>&1"
    )
    install = appliance.ssh(
        "DEBIAN_FRONTEND=noninteractive apt-get install -y /root/upgrade/*.deb; status=$?; "
        "touch /root/upgrade/done; exit $status",
        timeout=1800,
    )
    (ARTIFACTS / "upgrade-apt.log").write_text(install.stdout + install.stderr)
    during = appliance.ssh("sleep 1; cat /root/during").stdout.split()

    assert installed_versions(appliance) == dict.fromkeys(PACKAGES, newer)
    assert len(during) >= 10, during  # the client really ran through the upgrade
    # Each failure with where it fell among the answers and curl's exit status (28: no answer
    # in 2 s, 7: refused, 52: closed without an answer).
    failed = [f"{i + 1} of {len(during)}: {line}" for i, line in enumerate(during) if line not in ("s1", "s2")]
    assert not failed, failed
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
