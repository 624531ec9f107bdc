"""The replication guard's rule, on a clock of its own (tests/pair/test_replication.py runs it
against two real PostgreSQL servers)."""

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
