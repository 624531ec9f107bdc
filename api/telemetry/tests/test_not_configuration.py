"""Telemetry is not configuration: no backup, revision or pending change holds it, and a
restore that keeps a member keeps what was seen of it."""

import json

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient, APITestCase

from snapshots.restore import SECTIONS
from telemetry.models import HealthEvent, MemberHealth, TrafficSample
from telemetry.tests.helpers import agent, at, figures, member_entry, post, report, service_with_pool


class NotConfigurationTest(APITestCase):
    def setUp(self):
        self.admin = APIClient()
        self.admin.force_authenticate(
            get_user_model().objects.create_superuser("root", password="correct horse battery")
        )
        service_with_pool("web")
        _, self.agent = agent("lb1")

    def observe(self, seconds, status):
        body = report([{"service": "web", **figures(1, 10)}], [member_entry("web-pool", "s1", status)])
        self.assertEqual(post(self.agent, body, at(seconds)).status_code, 204)

    def stored(self):
        return TrafficSample.objects.count(), MemberHealth.objects.count(), HealthEvent.objects.count()

    def test_backups_revisions_and_pending_changes_leave_it_out(self):
        applied = self.admin.post("/api/v1/revisions/", {"message": "first"}, format="json")
        self.assertEqual(applied.status_code, 201, applied.content)
        backup = self.admin.get("/api/v1/backup/").content
        self.observe(0, "up")
        self.observe(10, "down")
        self.assertEqual(self.admin.get("/api/v1/backup/").content, backup)
        self.assertEqual(sorted(json.loads(backup)["objects"]), sorted(SECTIONS))
        self.assertEqual(self.admin.get("/api/v1/revisions/pending/").json()["pending"], False)

    def test_a_restore_keeps_the_telemetry_of_members_that_stay(self):
        document = json.loads(self.admin.get("/api/v1/backup/").content)
        self.observe(0, "up")
        before = self.stored()
        answer = self.admin.post("/api/v1/backup/restore/", {"document": document, "dry_run": False}, format="json")
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertEqual(self.stored(), before)
        # ... and a member the document drops goes with its telemetry.
        document["objects"]["pools"][0]["members"] = [
            m for m in document["objects"]["pools"][0]["members"] if m["name"] != "s1"
        ]
        answer = self.admin.post("/api/v1/backup/restore/", {"document": document, "dry_run": False}, format="json")
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertEqual(self.stored(), (1, 0, 0))
