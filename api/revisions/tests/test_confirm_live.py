"""Apply with confirm without anyone looking: a node agent's long-poll that spans the
deadline rolls back and delivers the rollback, and concurrent workers never publish
twice. Real transactions (no test transaction around them), so the publish lock is the
one production takes."""

import threading
import time
from datetime import timedelta

from django.db import connection
from django.test import TransactionTestCase
from django.utils import timezone

from revisions.models import Revision
from revisions.publish import NothingToApply, publish
from revisions.rollback import expire_confirmations
from revisions.tests.configuration import admin_client, agent_client, build, post
from services.models import Member


def at_once(function, count=2):
    """Run ``function`` in ``count`` threads released together; their results, or exceptions."""
    barrier, results = threading.Barrier(count), [None] * count

    def run(index):
        try:
            barrier.wait()
            results[index] = function()
        except Exception as err:  # the test looks at it
            results[index] = err
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


class ConfirmDeadlineTest(TransactionTestCase):
    def setUp(self):
        self.admin = admin_client()
        self.tokens = build(self.admin)

    def test_an_agent_poll_spanning_the_deadline_rolls_back_and_delivers_it(self):
        post(self.admin, "revisions/", {"message": "good"})
        Member.objects.filter(name="s1").update(weight=5)
        awaiting = post(self.admin, "revisions/", {"message": "risky", "confirm_within_s": 10})
        Revision.objects.filter(number=2).update(confirm_by=timezone.now() + timedelta(seconds=1.5))
        agent = agent_client(self.tokens["lb1"])
        started = time.monotonic()
        response = agent.get(f"/api/v1/agent/desired/?known={awaiting['number']}&wait=10")
        waited = time.monotonic() - started
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.data["revision"], 3)
        self.assertTrue(1.2 < waited < 5, waited)  # woke at the deadline, not at the end of the wait
        rollback = Revision.objects.get(number=3)
        self.assertEqual(
            (rollback.message, rollback.author, rollback.rollback_of),
            ("automatic rollback: r2 not confirmed within 10 s", None, 1),
        )
        self.assertEqual(Revision.objects.get(number=2).confirm_state, "rolled-back")
        self.assertEqual(Member.objects.get(name="s1").weight, 1)
        self.assertIn("server s1 10.0.2.11:80 weight 1", response.data["files"]["haproxy.cfg"])
        late = self.admin.post(f"/api/v1/revisions/{awaiting['id']}/confirm/")
        self.assertEqual((late.status_code, late.data["confirm_state"]), (409, "rolled-back"))

    def test_a_poll_before_the_deadline_does_not_roll_back(self):
        post(self.admin, "revisions/", {})
        awaiting = post(self.admin, "revisions/", {"confirm_within_s": 10, "force": True})
        response = agent_client(self.tokens["lb1"]).get(f"/api/v1/agent/desired/?known={awaiting['number']}&wait=1")
        self.assertEqual(response.status_code, 204)
        self.assertEqual(Revision.objects.get(number=2).confirm_state, "awaiting")
        self.assertEqual(Revision.objects.count(), 2)

    def test_two_workers_never_both_roll_back(self):
        post(self.admin, "revisions/", {})
        Member.objects.filter(name="s1").update(weight=5)
        post(self.admin, "revisions/", {"confirm_within_s": 10})
        Revision.objects.filter(number=2).update(confirm_by=timezone.now() - timedelta(seconds=1))
        results = at_once(expire_confirmations, count=3)
        self.assertEqual(sorted(r.number if isinstance(r, Revision) else r for r in results if r), [3], results)
        self.assertEqual(Revision.objects.count(), 3)

    def test_concurrent_applies_get_the_next_numbers(self):
        results = at_once(lambda: publish(None, "together", force=True), count=3)
        self.assertEqual(sorted(r.number for r in results if isinstance(r, Revision)), [1, 2, 3], results)

    def test_of_concurrent_applies_of_the_same_change_one_publishes(self):
        """Each decides what is pending under the publish lock: the others find nothing left."""
        results = at_once(lambda: publish(None, "together"), count=3)
        self.assertEqual([r.number for r in results if isinstance(r, Revision)], [1], results)
        self.assertEqual([r.base for r in results if isinstance(r, NothingToApply)], [1, 1], results)
        self.assertEqual(Revision.objects.count(), 1)
