"""The replication guard's rule, on a clock of its own (tests/pair/test_replication.py runs it
against two real PostgreSQL servers)."""

import os
import time

from cluster.replication import SYNCHRONOUS, Guard, Standby


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def standby(state="streaming", silent_s=0.0, flushes=True, name="lb2"):
    return Standby(name, "192.0.2.2", state, "quorum", 0, silent_s, flushes)


def test_no_standby_at_all_never_waits():
    assert Guard(away=10, clock=Clock()).wanted([]) == ""


def test_a_standby_that_keeps_up_makes_commits_wait_for_it():
    assert Guard(away=10, clock=Clock()).wanted([standby()]) == SYNCHRONOUS


def test_standbys_that_cannot_confirm_do_not():
    guard = Guard(away=10, clock=Clock())
    assert guard.wanted([standby(state="catchup")]) == ""  # not caught up: commits would stall
    assert guard.wanted([standby(flushes=False)]) == ""  # pg_basebackup's WAL stream
    assert guard.wanted([standby(silent_s=10.0)]) == ""  # silent for `away`
    assert guard.wanted([standby(silent_s=None)]) == ""  # never answered


def test_a_standby_that_goes_away_gets_away_seconds_then_the_primary_degrades():
    clock = Clock()
    guard = Guard(away=10, clock=clock)
    assert guard.wanted([standby()]) == SYNCHRONOUS
    clock.now += 9.5
    assert guard.wanted([]) == SYNCHRONOUS  # gone for 9.5 s: still waited for
    clock.now += 0.5
    assert guard.wanted([]) == ""
    clock.now += 60
    assert guard.wanted([standby(state="catchup")]) == ""  # back, catching up: still asynchronous
    assert guard.wanted([standby()]) == SYNCHRONOUS  # caught up


def test_one_of_two_standbys_keeping_up_is_enough():
    guard = Guard(away=10, clock=Clock())
    assert guard.wanted([standby(name="lb2", state="catchup"), standby(name="lb3")]) == SYNCHRONOUS


def test_the_wait_counts_from_the_standbys_last_answer():
    clock = Clock()
    guard = Guard(away=10, clock=clock)
    assert guard.wanted([standby(silent_s=8.0)]) == SYNCHRONOUS  # answered 8 s ago
    clock.now += 1.5
    assert guard.wanted([]) == SYNCHRONOUS  # 9.5 s
    clock.now += 0.5
    assert guard.wanted([]) == ""  # 10 s


def test_the_witness_counts_only_where_keepalived_marks_its_answers(tmp_path):
    conf, mark = tmp_path / "keepalived.conf", tmp_path / "witness"
    guard = Guard(away=10, clock=Clock(), management_conf=str(conf))
    assert guard.witness_silence() is None  # no management VIP here
    conf.write_text(
        'vrrp_script fulcrum_management_witness {\n    script "/usr/bin/ping -n -q -c 1 -W 1 10.0.2.2"\n}\n'
    )
    assert guard.witness_silence() is None  # an older fulcrum-management's check: it marks nothing
    conf.write_text(
        f'vrrp_script fulcrum_management_witness {{\n    script "/usr/lib/fulcrum/bin/fulcrum-witness 10.0.2.2 {mark}"\n}}\n'
    )
    assert guard.witness_silence() == ("10.0.2.2", float("inf"))  # checked, and not answered since keepalived started
    mark.touch()
    address, silent = guard.witness_silence()
    assert address == "10.0.2.2" and silent < 1
    os.utime(mark, (time.time() - 30, time.time() - 30))
    assert 29 < guard.witness_silence()[1] < 31
    assert Guard().witness_silence() is None  # a guard told of no management VIP at all
