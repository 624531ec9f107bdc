"""services.snapshot.current(): the pending changes and a list's advice reuse one snapshot until
the API records a write or publishes; a write made outside the API shows within the reuse window."""

from unittest import mock

from django.test import override_settings
from rest_framework.test import APITestCase

from accounts.tests.people import person
from services import snapshot
from services.models import Pool

PENDING = "/api/v1/revisions/pending/"


def pending_names(client):
    answer = client.get(PENDING)
    assert answer.status_code == 200, answer.content
    return sorted(o["path"] for o in answer.json()["objects"])


@override_settings(FULCRUM_SNAPSHOT_REUSE_S=30)
class CurrentSnapshotTest(APITestCase):
    def setUp(self):
        snapshot._current.update(stamp=None, at=0.0, snapshot=None)
        self.client.force_authenticate(person("cur", "admin"))

    def test_reused_until_the_api_records_a_write(self):
        self.assertEqual(pending_names(self.client), [])
        with mock.patch.object(snapshot, "freeze", wraps=snapshot.freeze) as freeze:
            Pool.objects.create(name="outside")  # no API call: nothing recorded
            self.assertEqual(pending_names(self.client), [])  # late, within the window
            self.assertEqual(freeze.call_count, 0)
            created = self.client.post("/api/v1/pools/", {"name": "inside"}, format="json")
            self.assertEqual(created.status_code, 201, created.content)
            self.assertEqual(pending_names(self.client), ["pools/inside", "pools/outside"])
            self.assertEqual(pending_names(self.client), ["pools/inside", "pools/outside"])
            self.assertEqual(freeze.call_count, 2)  # once for the write's own checks, once for pending

    def test_a_publish_refreshes_it(self):
        self.assertEqual(self.client.post("/api/v1/pools/", {"name": "a"}, format="json").status_code, 201)
        self.assertEqual(pending_names(self.client), ["pools/a"])
        applied = self.client.post("/api/v1/revisions/", {"message": "first"}, format="json")
        self.assertEqual(applied.status_code, 201, applied.content)
        self.assertEqual(pending_names(self.client), [])

    def test_the_window_bounds_how_late_it_is(self):
        self.assertEqual(pending_names(self.client), [])
        Pool.objects.create(name="outside")
        with mock.patch.object(snapshot.time, "monotonic", return_value=snapshot._current["at"] + 30):
            self.assertEqual(pending_names(self.client), ["pools/outside"])
