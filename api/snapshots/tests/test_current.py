"""snapshots.freeze.current(): the pending changes and a list's advice reuse one snapshot until
a change commits (the snapshot generation, however the change was made); the reuse window
bounds how late it can be."""

from unittest import mock

from django.test import TransactionTestCase, override_settings
from rest_framework.test import APIClient

from accounts.tests.people import person
from services.models import Pool
from snapshots import freeze as snapshot

PENDING = "/api/v1/revisions/pending/"


def pending_names(client):
    answer = client.get(PENDING)
    assert answer.status_code == 200, answer.content
    return sorted(o["path"] for o in answer.json()["objects"])


@override_settings(FULCRUM_SNAPSHOT_REUSE_S=30)
class CurrentSnapshotTest(TransactionTestCase):
    """Changes commit here (the generation moves at commit), as they do in the API."""

    def setUp(self):
        snapshot._current.update(stamp=None, at=0.0, snapshot=None)
        self.client = APIClient()
        self.client.force_authenticate(person("cur", "admin"))

    def test_reused_until_a_change_commits(self):
        self.assertEqual(pending_names(self.client), [])
        with mock.patch.object(snapshot, "freeze", wraps=snapshot.freeze) as freeze:
            self.assertEqual(pending_names(self.client), [])
            self.assertEqual(freeze.call_count, 0)  # nothing changed: reused
            Pool.objects.create(name="outside")  # not through the API: seen all the same
            self.assertEqual(pending_names(self.client), ["pools/outside"])
            self.assertEqual(freeze.call_count, 1)
            created = self.client.post("/api/v1/pools/", {"name": "inside"}, format="json")
            self.assertEqual(created.status_code, 201, created.content)
            self.assertEqual(pending_names(self.client), ["pools/inside", "pools/outside"])
            self.assertEqual(pending_names(self.client), ["pools/inside", "pools/outside"])
            # Once more, for pending: the write checks only its neighbourhood (freeze_around).
            self.assertEqual(freeze.call_count, 2)

    def test_a_publish_refreshes_it(self):
        self.assertEqual(self.client.post("/api/v1/pools/", {"name": "a"}, format="json").status_code, 201)
        self.assertEqual(pending_names(self.client), ["pools/a"])
        applied = self.client.post("/api/v1/revisions/", {"message": "first"}, format="json")
        self.assertEqual(applied.status_code, 201, applied.content)
        self.assertEqual(pending_names(self.client), [])

    def test_the_window_bounds_how_late_it_is(self):
        """Should a change slip past the generation (the instant between its commit and the
        sequence's next value), the snapshot is at most the window late."""
        with mock.patch.object(snapshot, "generation", return_value=7):
            self.assertEqual(pending_names(self.client), [])
            Pool.objects.create(name="outside")
            self.assertEqual(pending_names(self.client), [])  # late, within the window
            with mock.patch.object(snapshot.time, "monotonic", return_value=snapshot._current["at"] + 30):
                self.assertEqual(pending_names(self.client), ["pools/outside"])
