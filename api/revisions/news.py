"""News of revisions for the agents' long-polls, from PostgreSQL's LISTEN/NOTIFY.

A trigger on the revisions table (migration 0004) notifies ``CHANNEL`` at the commit of any
change to a revision: a publish, a rollback, a confirmation. One thread per API process
listens, on a connection of its own, and wakes every long-poll waiting in that process. A
waiting long-poll holds a thread but no database connection and costs no query until news
comes, where it used to query every quarter second.

Waking is only a hint: a woken poll reads the revisions again, as it did before it waited.
While the listener has no connection (PostgreSQL restarting, a switchover), polls wait at most
``UNHEARD_STEP_S`` between reads; a (re)connection wakes them all, as a change may have been
missed meanwhile.
"""

import logging
import threading
import time

import psycopg
from django.db import connection

CHANNEL = "fulcrum_revisions"  # the trigger of migrations/0004_revision_news.py notifies it
UNHEARD_STEP_S = 1.0  # between reads while nothing listens
RECONNECT_S = 1.0
HEARTBEAT_S = 30.0  # the listener's connection is tried this often
log = logging.getLogger(__name__)


class News:
    """A counter of notifications, and a condition to wait for the next one."""

    def __init__(self):
        self._changed = threading.Condition()
        self._count = 0
        self._listening = False
        self._thread = None
        self._backend = self._params = None
        self._stopping = False

    def seen(self):
        """The count to hand to ``wait``: read it before reading the revisions, so that a change
        committed between that read and the wait is not slept through."""
        self._start()
        with self._changed:
            return self._count

    def wait(self, seen, timeout):
        """Until the count passes ``seen`` or ``timeout`` seconds; whether it did."""
        with self._changed:
            step = timeout if self._listening else min(timeout, UNHEARD_STEP_S)
            return self._changed.wait_for(lambda: self._count != seen, max(step, 0))

    def _bump(self, listening):
        with self._changed:
            self._count += 1
            self._listening = listening
            self._changed.notify_all()

    def _start(self):
        if self._thread is None or not self._thread.is_alive():
            with self._changed:
                if self._thread is None or not self._thread.is_alive():
                    self._params = connection.get_connection_params()  # this process's database, tests' too
                    self._thread = threading.Thread(target=self._listen, name="revision-news", daemon=True)
                    self._thread.start()

    def stop(self):
        """End the listener (its connection would keep a test database from being dropped)."""
        self._stopping = True
        deadline = time.monotonic() + 10
        while self._thread is not None and self._thread.is_alive() and time.monotonic() < deadline:
            if self._backend is not None:
                with psycopg.connect(autocommit=True, **self._params) as conn:
                    conn.execute("SELECT pg_terminate_backend(%s)", [self._backend])
            self._thread.join(0.2)

    def _listen(self):
        while not self._stopping:
            try:
                with psycopg.connect(autocommit=True, **self._params) as conn:
                    self._backend = conn.info.backend_pid
                    if self._stopping:
                        return
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._bump(listening=True)  # anything before this LISTEN: read again
                    while True:
                        for _ in conn.notifies(timeout=HEARTBEAT_S):
                            self._bump(listening=True)
                        conn.execute("SELECT 1")  # a server gone silent (a cut link) raises here
            except psycopg.Error as err:
                self._backend = None
                if self._stopping:
                    return
                if self._listening:
                    log.warning("revision news: not listening (%s); long-polls read every %s s", err, UNHEARD_STEP_S)
                self._bump(listening=False)
            time.sleep(RECONNECT_S)


NEWS = News()
