"""The agent's long-poll and apply with confirm: the bundle carries ``confirm_by`` while the
revision awaits confirmation, so that a node cut off from the API can go back by itself; an
agent watching that deadline (``awaiting=1``) hears of the confirmation at once; and the
report of a node that went back is taken."""

import threading
import time
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import connection
from django.test import TransactionTestCase
from django.utils import timezone
from rest_framework.test import APIClient, APITestCase

from cluster.models import Node
from revisions.models import NodeRevision, Revision
from services.models import Member, Pool, VirtualService


def _appliance():
    """One service, one node; returns the admin's and the node agent's clients."""
    pool = Pool.objects.create(name="web")
    for i in (1, 2):
        Member.objects.create(pool=pool, name=f"s{i}", address=f"10.77.2.1{i}", port=80)
    VirtualService.objects.create(name="web", vip="10.77.100.10", port=80, default_pool=pool)
    admin = APIClient()
    admin.force_authenticate(get_user_model().objects.create_superuser("ops", password="correct horse battery"))
    node = Node(name="lb1")
    token = node.rotate_token()
    node.save()
    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Node {token}")
    return admin, agent


def _apply(admin, **body):
    response = admin.post("/api/v1/revisions/", body, format="json")
    assert response.status_code == 201, response.data
    return response.data


def _poll(agent, known, wait=0, awaiting=None):
    extra = "" if awaiting is None else f"&awaiting={awaiting}"
    return agent.get(f"/api/v1/agent/desired/?known={known}&wait={wait}{extra}")


class ConfirmByInBundleTest(APITestCase):
    def setUp(self):
        self.admin, self.agent = _appliance()

    def test_a_revision_applied_without_confirm_has_null(self):
        _apply(self.admin)
        response = _poll(self.agent, 0)
        self.assertEqual(response.status_code, 200)
        self.assertEqual((response.data["revision"], response.data["confirm_by"]), (1, None))
        self.assertIsNone(response.json()["confirm_by"])

    def test_an_awaiting_revision_carries_its_deadline_as_rfc3339(self):
        _apply(self.admin)
        before = timezone.now()
        awaiting = _apply(self.admin, confirm_within_s=30, force=True)
        body = _poll(self.agent, 1).json()
        self.assertEqual(body["revision"], 2)
        confirm_by = datetime.fromisoformat(body["confirm_by"])  # RFC 3339: with its offset
        self.assertIsNotNone(confirm_by.tzinfo)
        self.assertEqual(confirm_by, Revision.objects.get(number=2).confirm_by)
        self.assertTrue(before + timedelta(seconds=29) < confirm_by < timezone.now() + timedelta(seconds=31))
        self.assertEqual(awaiting["confirm_by"].replace("+00:00", "Z"), body["confirm_by"].replace("+00:00", "Z"))

    def test_a_confirmed_revision_no_longer_carries_it(self):
        _apply(self.admin)
        awaiting = _apply(self.admin, confirm_within_s=30, force=True)
        self.assertEqual(self.admin.post(f"/api/v1/revisions/{awaiting['id']}/confirm/").status_code, 200)
        self.assertIsNone(_poll(self.agent, 1).data["confirm_by"])

    def test_a_node_watching_the_deadline_hears_of_the_confirmation_at_once(self):
        _apply(self.admin)
        awaiting = _apply(self.admin, confirm_within_s=30, force=True)
        self.admin.post(f"/api/v1/revisions/{awaiting['id']}/confirm/")
        started = time.monotonic()
        response = _poll(self.agent, 2, wait=10, awaiting=1)
        self.assertLess(time.monotonic() - started, 2)
        self.assertEqual(response.status_code, 200)
        self.assertEqual((response.data["revision"], response.data["confirm_by"]), (2, None))
        # Without the flag the node runs the newest revision: nothing to say.
        self.assertEqual(_poll(self.agent, 2).status_code, 204)

    def test_a_node_that_never_watched_is_not_answered_for_a_plain_revision(self):
        _apply(self.admin)
        self.assertEqual(_poll(self.agent, 1, awaiting=0).status_code, 204)

    def test_bad_awaiting_values_are_refused(self):
        _apply(self.admin)
        for value in ("2", "-1", "yes", ""):
            response = _poll(self.agent, 1, awaiting=value)
            self.assertEqual((response.status_code, list(response.json())), (400, ["awaiting"]), value)

    def test_the_report_of_a_node_that_went_back_is_kept(self):
        _apply(self.admin)
        _apply(self.admin, confirm_within_s=30, force=True)
        for number in (1, 2):
            _poll(self.agent, number - 1)
            body = {"revision": number, "state": "applied", "message": "applied haproxy.cfg"}
            self.assertEqual(self.agent.post("/api/v1/agent/reports/", body, format="json").status_code, 204)
        went_back = "no contact with the API within 10 s after r2's confirm deadline: went back to r1"
        reports = [
            {"revision": 2, "state": "failed", "message": went_back},
            {"revision": 1, "state": "applied", "message": f"applied haproxy.cfg ({went_back})"},
        ]
        for body in reports:
            self.assertEqual(self.agent.post("/api/v1/agent/reports/", body, format="json").status_code, 204)
        copy = NodeRevision.objects.get(revision__number=2)
        self.assertEqual((copy.state, copy.message), ("failed", went_back))
        self.assertEqual(Node.objects.get(name="lb1").applied_revision.number, 1)
        nodes = self.admin.get(f"/api/v1/revisions/{copy.revision_id}/").data["nodes"]
        self.assertEqual([(n["node"], n["state"], n["message"]) for n in nodes], [("lb1", "failed", went_back)])


class ConfirmDuringPollTest(TransactionTestCase):
    """Polls that wait (and so close idle connections): real transactions, and the
    confirmation commits in another connection while the poll waits."""

    def test_a_node_watching_the_deadline_waits_while_it_awaits(self):
        admin, agent = _appliance()
        _apply(admin)
        _apply(admin, confirm_within_s=30, force=True)
        started = time.monotonic()
        self.assertEqual(_poll(agent, 2, wait=1, awaiting=1).status_code, 204)
        self.assertGreaterEqual(time.monotonic() - started, 0.9)

    def test_a_poll_watching_the_deadline_wakes_when_someone_confirms(self):
        admin, agent = _appliance()
        _apply(admin)
        awaiting = _apply(admin, confirm_within_s=30, force=True)
        answer = {}

        def poll():
            started = time.monotonic()
            try:
                answer["response"] = _poll(agent, 2, wait=10, awaiting=1)
            finally:
                answer["took"] = time.monotonic() - started
                connection.close()

        poller = threading.Thread(target=poll)
        poller.start()
        time.sleep(1)
        self.assertEqual(admin.post(f"/api/v1/revisions/{awaiting['id']}/confirm/").status_code, 200)
        poller.join(15)
        self.assertEqual(answer["response"].status_code, 200)
        self.assertEqual((answer["response"].data["revision"], answer["response"].data["confirm_by"]), (2, None))
        self.assertTrue(0.9 < answer["took"] < 3, answer["took"])
