"""The agent's state directory full, then read-only: the last good configuration keeps
serving, the node says in plain words why a revision did not apply, and that revision
applies once the directory takes writes again, without restarting the agent (issue 20).

    client ns --> VIP 10.77.100.10:80 (HAProxy in lb ns, run by fulcrum-agent) --> s1 s2 s3
                  VIP 10.77.100.11:80 (added while the directory is read-only)

The agent's state directory (its file sets, state.json, HAProxy's run/) is a 4 MiB tmpfs
of this module's own: filled to the last page by a file, later remounted read-only. A
request every 20 ms goes through the VIP all along.
"""

import collections
import contextlib
import errno
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.harness.requestloop import RequestLoop, longest_gap
from tests.harness.stack import ARTIFACTS, Stack

pytestmark = pytest.mark.netns

VIP, VIP2 = "10.77.100.10", "10.77.100.11"
TMPFS_SIZE = "4m"
# The agent tries a revision its state directory refused again after 1, 2, 4, 8, 10, 10... s.
RECOVERY_BOUND_S = 15
# How long the directory stays unwritable while the loop runs: a few retries.
OUTAGE_S = 6


class TmpfsStack(Stack):
    """A Stack whose agent keeps its state directory on a small tmpfs of its own."""

    def _start_agents(self):
        self.state_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0700", "fulcrum-disk-test", str(self.state_dir)],
            check=True,
        )
        super()._start_agents()

    def _stop_daemons(self):
        super()._stop_daemons()
        unmount(self.state_dir)


def unmount(path):
    """Unmount ``path`` if it is a mount point; lazily, so that HAProxy, which may still be
    exiting with its sockets there, cannot keep it."""
    if os.path.ismount(path):
        subprocess.run(["umount", "--lazy", str(path)], check=True)


@pytest.fixture(scope="module")
def stack(lab):
    tmpfs = None
    try:
        with TmpfsStack(lab) as stack:
            tmpfs = stack.state_dir
            yield stack
    finally:
        if tmpfs is not None:  # a stop that failed half-way must not leave the mount behind
            unmount(tmpfs)


@pytest.fixture(scope="module")
def service(stack, lab):
    pool = stack.api.create("/api/v1/pools/", name="web", algorithm="round-robin")
    members = {
        name: stack.api.create("/api/v1/members/", pool=pool["id"], name=name, address=address, port=80)
        for name, address in lab.servers.items()
    }
    stack.api.create(
        "/api/v1/virtual-services/", name="web", vip=VIP, port=80, protocol="http", default_pool=pool["id"]
    )
    assert stack.apply("web service with three servers")["nodes"][0]["state"] == "applied"
    return members


@contextlib.contextmanager
def filled(directory):
    """A file that takes every free page of ``directory``'s file system, removed on exit."""
    filler = Path(directory) / "filler"
    with open(filler, "wb", buffering=0) as out:
        chunk = bytes(1 << 16)
        try:
            while out.write(chunk):
                pass
        except OSError as err:
            assert err.errno == errno.ENOSPC, err
    try:
        yield filler
    finally:
        filler.unlink(missing_ok=True)


@contextlib.contextmanager
def read_only(directory):
    """``directory``'s file system remounted read-only, read-write again on exit."""
    subprocess.run(["mount", "-o", "remount,ro", str(directory)], check=True)
    try:
        yield
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(directory)], check=True)


def spread(lab, vip, count):
    answers = collections.Counter()
    for _ in range(count):
        status, body, _ = lab.client_get(f"http://{vip}/")
        answers[body.strip() if status == 200 else f"HTTP {status}"] += 1
    return answers


def publish(stack, message):
    response = stack.api.post("/api/v1/revisions/", json={"message": message})
    assert response.status_code == 201, response.text
    return response.json()["number"]


def node_result(stack, number):
    revision = stack.api.get(f"/api/v1/revisions/{number}/").json()
    return next(n for n in revision["nodes"] if n["node"] == stack.node)


def wait_for_state(stack, number, state, timeout):
    """Seconds until this node reports ``state`` for revision ``number``; fails after ``timeout``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if node_result(stack, number)["state"] == state:
            return time.monotonic() - start
        time.sleep(0.1)
    pytest.fail(f"revision {number}: not {state} within {timeout}s: {node_result(stack, number)}\n{stack.log('agent')}")


LINKS = ("live", "last-good")


def live_set(stack):
    """What the state directory says the daemons run: state.json's revision, the live and
    last-good links, and the file sets kept (a set an apply left half-written would show)."""
    state = json.loads((stack.state_dir / "state.json").read_text())
    links = [os.readlink(link) if link.is_symlink() else None for link in map(stack.state_dir.joinpath, LINKS)]
    return state["revision"], links, sorted(p.name for p in (stack.state_dir / "bundles").iterdir())


def unwritable_phase(stack, lab, name, make_unwritable, change, cause):
    """Publish ``change`` while ``make_unwritable`` holds the state directory unwritable for
    OUTAGE_S, under a steady request loop; check what the node said and that the revision
    applies once the directory takes writes again. Returns the servers that answered while
    the revision was refused."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    before = live_set(stack)
    with RequestLoop(lab.ns("cl"), [f"http://{VIP}/"], ARTIFACTS / f"loop-disk-{name}.jsonl") as loop:
        with make_unwritable(stack.state_dir):
            change()
            number = publish(stack, f"published while the state directory is {name}")
            wait_for_state(stack, number, "failed", 30)
            refused = node_result(stack, number)["message"]
            published = time.monotonic()
            time.sleep(OUTAGE_S)  # the agent tries again meanwhile, in vain
            assert live_set(stack) == before  # nothing of the refused revision was kept, nor went live
            assert node_result(stack, number)["state"] == "failed"
            freed = time.monotonic()
        recovery = wait_for_state(stack, number, "applied", RECOVERY_BOUND_S + 10)
        time.sleep(0.5)
        records = [r for r in loop.records() if r["t"] <= freed + recovery]
    failed = sum(not r["ok"] for r in records)
    attempts = stack.log("agent").count(f'msg="apply: failed" revision={number} ')
    figures = {
        "failed": failed,
        "requests": len(records),
        "gap": longest_gap(records).as_dict(),
        "message": refused,
        "attempts": attempts,
        "applied_after_s": round(recovery, 2),
    }
    (ARTIFACTS / f"disk-{name}.json").write_text(json.dumps(figures, indent=1))
    print(
        f"state directory {name}: {failed} of {len(records)} requests failed; the node said {refused!r}; "
        f"{attempts} attempts in {OUTAGE_S} s; applied {recovery:.2f} s after the directory took writes again"
    )
    assert cause in refused, refused
    assert str(stack.state_dir) in refused, refused
    assert failed == 0, f"{failed} of {len(records)} requests failed"
    assert 2 <= attempts <= OUTAGE_S, f"{attempts} attempts in {OUTAGE_S} s: want a retry with a backoff"
    assert recovery <= RECOVERY_BOUND_S, recovery
    assert stack.log("agent").count("fulcrum-agent starting") == 1  # applied without a restart
    return {r["server"] for r in records if published <= r["t"] <= freed}


def test_full_state_directory(service, stack, lab):
    """A revision published while the directory is full is refused in plain words, the last
    good one keeps serving, and it applies once the filler is gone: s3 drained."""
    assert spread(lab, VIP, 30) == {"s1": 10, "s2": 10, "s3": 10}

    def drain_s3():
        stack.api.patch(f"/api/v1/members/{service['s3']['id']}/", json={"state": "drain"}).raise_for_status()

    served = unwritable_phase(stack, lab, "full", filled, drain_s3, "no space left on device")
    assert served == {"s1", "s2", "s3"}  # the last good revision, s3 not drained
    assert spread(lab, VIP, 20) == {"s1": 10, "s2": 10}


def test_read_only_state_directory(service, stack, lab):
    """A revision published while the directory is read-only is refused in plain words, the
    last good one keeps serving, and it applies once the directory is read-write: VIP2 answers."""

    def add_vip2():
        pool = service["s1"]["pool"]
        stack.api.create("/api/v1/virtual-services/", name="second", vip=VIP2, port=80, default_pool=pool)

    unwritable_phase(stack, lab, "read-only", read_only, add_vip2, "read-only file system")
    assert set(spread(lab, VIP2, 10)) <= {"s1", "s2"}
