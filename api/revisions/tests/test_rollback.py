"""Pending changes, rollback to any revision, apply with confirm, and what a node that failed
an apply shows."""

import io
import json
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient, APITestCase

from accounts.models import AuditEntry
from certificates.models import Certificate
from cluster.models import Node
from revisions.models import Revision
from revisions.tests.configuration import admin_client, agent_client, build, post
from revisions.tests.test_backup import rows
from services.models import HealthCheck, Member, Pool, VirtualService


class RevisionTestCase(APITestCase):
    def setUp(self):
        self.admin = admin_client()
        self.tokens = build(self.admin)

    def apply(self, **body):
        return post(self.admin, "revisions/", body)

    def pending(self):
        response = self.admin.get("/api/v1/revisions/pending/")
        self.assertEqual(response.status_code, 200)
        return response.data

    def revision(self, number):
        response = self.admin.get(f"/api/v1/revisions/{Revision.objects.get(number=number).pk}/")
        self.assertEqual(response.status_code, 200)
        return response.data


NONE = {"added": 0, "changed": 0, "removed": 0}


class PendingTest(RevisionTestCase):
    def test_pending_until_applied_and_after_each_edit(self):
        before = self.pending()
        self.assertEqual((before["pending"], before["base_revision"]), (True, None))
        self.assertIn("pools/web", [o["path"] for o in before["objects"]])
        self.apply(message="first")
        self.assertEqual(
            self.pending(), {"pending": False, "base_revision": 1, "count": 0, "summary": NONE, "objects": []}
        )
        s1 = Member.objects.get(name="s1")
        self.assertEqual(self.admin.patch(f"/api/v1/members/{s1.pk}/", {"weight": 4}, format="json").status_code, 200)
        after = self.pending()
        self.assertTrue(after["pending"])
        self.assertEqual(
            [(o["path"], [(f["field"], f["old"], f["new"]) for f in o["fields"]]) for o in after["objects"]],
            [("pools/web", [("members/s1/weight", 1, 4)])],
        )

    def test_a_runtime_change_is_live_not_pending(self):
        self.apply()
        s2 = Member.objects.get(name="s2")
        response = self.admin.post(f"/api/v1/members/{s2.pk}/runtime/", {"state": "drain"}, format="json")
        self.assertEqual(response.status_code, 200, response.data)
        self.assertEqual(
            self.pending(), {"pending": False, "base_revision": 2, "count": 0, "summary": NONE, "objects": []}
        )

    def test_pending_costs_the_same_queries_for_many_objects(self):
        def queries():
            with CaptureQueriesContext(connection) as captured:
                self.pending()
            return len(captured)

        self.apply()
        few = queries()
        for i in range(20):
            pool = Pool.objects.create(name=f"p{i}")
            Member.objects.create(pool=pool, name="m", address=f"10.9.{i}.1", port=80)
            VirtualService.objects.create(name=f"v{i}", vip=f"10.8.{i}.1", port=80, default_pool=pool)
        self.assertEqual(queries(), few)


class HistoryTest(RevisionTestCase):
    def test_a_revision_is_found_by_its_number(self):
        """The console links rollback_of (a number) to the revision's page (by id)."""
        self.apply(message="first")
        self.apply(message="second", force=True)
        response = self.admin.get("/api/v1/revisions/?number=1")
        self.assertEqual(response.status_code, 200)
        self.assertEqual(
            [(r["id"], r["message"]) for r in response.data["results"]], [(Revision.objects.get(number=1).pk, "first")]
        )
        self.assertEqual(self.admin.get("/api/v1/revisions/?number=7").data["count"], 0)
        self.assertEqual(self.admin.get("/api/v1/revisions/").data["count"], 2)
        refused = self.admin.get("/api/v1/revisions/?number=one")
        self.assertEqual((refused.status_code, refused.data), (400, {"number": ["Must be a whole number."]}))


class RollbackTest(RevisionTestCase):
    def test_rollback_restores_the_objects_keeping_ids_and_publishes(self):
        self.apply(message="good")
        web = Pool.objects.get(name="web")
        s1, s2, s3 = (Member.objects.get(name=n) for n in ("s1", "s2", "s3"))
        check = HealthCheck.objects.get(pool=web)
        self.admin.patch(f"/api/v1/members/{s1.pk}/", {"port": 8080}, format="json")
        self.admin.delete(f"/api/v1/members/{s3.pk}/")
        self.admin.patch(f"/api/v1/pools/{web.pk}/", {"algorithm": "least-connections"}, format="json")
        extra = post(self.admin, "pools/", {"name": "extra"})
        self.apply(message="bad")
        response = self.admin.post(
            f"/api/v1/revisions/{Revision.objects.get(number=1).pk}/rollback/", {}, format="json"
        )
        self.assertEqual(response.status_code, 201, response.data)
        self.assertEqual(
            (response.data["number"], response.data["rollback_of"], response.data["message"], response.data["author"]),
            (3, 1, "rollback to r1", "admin"),
        )
        # Ids kept; versions raised only where something changed; what r1 lacked is gone.
        pool = Pool.objects.get(name="web")
        self.assertEqual((pool.pk, pool.algorithm), (web.pk, "round-robin"))
        self.assertEqual(pool.version, web.version + 2)  # the edit, then the rollback
        member = Member.objects.get(name="s1")
        self.assertEqual((member.pk, member.port, member.version), (s1.pk, 80, s1.version + 2))
        self.assertEqual(Member.objects.get(name="s2").version, s2.version)
        self.assertEqual(HealthCheck.objects.get(pool=web).version, check.version)
        self.assertTrue(Member.objects.filter(name="s3", pool=web).exists())
        self.assertFalse(Pool.objects.filter(pk=extra["id"]).exists())
        self.assertFalse(self.pending()["pending"])
        diff = self.admin.get(f"/api/v1/revisions/{Revision.objects.get(number=3).pk}/diff/?from=1").data
        self.assertEqual(diff["objects"], [])
        custom = self.admin.post(
            f"/api/v1/revisions/{Revision.objects.get(number=2).pk}/rollback/", {"message": "again"}, format="json"
        )
        self.assertEqual((custom.data["number"], custom.data["message"], custom.data["rollback_of"]), (4, "again", 2))

    def test_rollback_to_a_revision_whose_certificate_is_gone_is_refused(self):
        self.apply()
        www = VirtualService.objects.get(name="www")
        generated = post(self.admin, "certificates/generate/", {"name": "fresh", "common_name": "www.example.com"})
        site = Certificate.objects.get(name="site")
        response = self.admin.patch(
            f"/api/v1/virtual-services/{www.pk}/", {"default_certificate": generated["id"]}, format="json"
        )
        self.assertEqual(response.status_code, 200, response.data)
        self.assertEqual(self.admin.delete(f"/api/v1/certificates/{site.pk}/").status_code, 204)
        self.apply()
        stored, count = rows(), Revision.objects.count()
        response = self.admin.post(
            f"/api/v1/revisions/{Revision.objects.get(number=1).pk}/rollback/", {}, format="json"
        )
        self.assertEqual(response.status_code, 400, response.data)
        self.assertEqual(response.data["detail"], "Not rolled back.")
        (problem,) = response.data["problems"]
        self.assertEqual(problem["path"], "certificates/site")
        self.assertIn(site.fingerprint, problem["message"])
        self.assertIn("no longer stored", problem["message"])
        self.assertEqual((rows(), Revision.objects.count()), (stored, count))

    def test_bad_rollback_bodies_are_refused(self):
        self.apply()
        url = f"/api/v1/revisions/{Revision.objects.get().pk}/rollback/"
        self.assertEqual(self.admin.post(url, {"colour": 1}, format="json").status_code, 400)
        self.assertEqual(self.admin.post(url, {"message": "x" * 501}, format="json").status_code, 400)
        self.assertEqual(self.admin.post("/api/v1/revisions/999/rollback/", {}, format="json").status_code, 404)
        self.assertEqual(Revision.objects.count(), 1)


class ConfirmTest(RevisionTestCase):
    def confirm(self, number, expected=200):
        response = self.admin.post(f"/api/v1/revisions/{Revision.objects.get(number=number).pk}/confirm/")
        self.assertEqual(response.status_code, expected, response.data)
        return response.data

    def test_confirmed_in_time_stays(self):
        self.apply()
        Member.objects.filter(name="s1").update(weight=3)
        started = timezone.now()
        data = self.apply(confirm_within_s=60)
        self.assertEqual((data["confirm_state"], data["confirm_within_s"]), ("awaiting", 60))
        confirm_by = Revision.objects.get(number=2).confirm_by
        self.assertTrue(started + timedelta(seconds=59) <= confirm_by <= timezone.now() + timedelta(seconds=60))
        self.assertEqual(self.confirm(2)["confirm_state"], "confirmed")
        Revision.objects.filter(number=2).update(confirm_by=timezone.now() - timedelta(seconds=1))
        self.assertEqual(self.admin.get("/api/v1/revisions/").data["count"], 2)  # nothing rolled back
        self.assertEqual(Member.objects.get(name="s1").weight, 3)
        self.assertEqual(self.confirm(2, expected=409)["confirm_state"], "confirmed")
        self.assertEqual(self.confirm(1, expected=409)["confirm_state"], "none")

    def test_a_new_apply_confirms_the_one_awaiting(self):
        self.apply(confirm_within_s=60)
        self.apply(confirm_within_s=30, force=True)
        states = dict(Revision.objects.values_list("number", "confirm_state"))
        self.assertEqual(states, {1: "confirmed", 2: "awaiting"})
        self.apply(force=True)
        self.assertEqual(Revision.objects.get(number=2).confirm_state, "confirmed")

    def test_a_rollback_while_awaiting_rolls_it_back(self):
        self.apply()
        self.apply(confirm_within_s=60, force=True)
        response = self.admin.post(
            f"/api/v1/revisions/{Revision.objects.get(number=1).pk}/rollback/", {}, format="json"
        )
        self.assertEqual(response.status_code, 201, response.data)
        self.assertEqual(Revision.objects.get(number=2).confirm_state, "rolled-back")
        self.confirm(2, expected=409)

    def test_deadline_is_enforced_by_reading_the_history_and_by_the_command(self):
        self.apply()
        Member.objects.filter(name="s1").update(weight=3)
        self.apply(confirm_within_s=10)
        Revision.objects.filter(number=2).update(confirm_by=timezone.now() - timedelta(seconds=1))
        listed = self.admin.get("/api/v1/revisions/").data["results"]
        self.assertEqual([r["number"] for r in listed], [3, 2, 1])
        self.assertEqual(
            (listed[0]["message"], listed[0]["author"], listed[0]["rollback_of"]),
            ("automatic rollback: r2 not confirmed within 10 s", None, 1),
        )
        self.assertEqual(listed[1]["confirm_state"], "rolled-back")
        self.assertEqual(Member.objects.get(name="s1").weight, 1)
        self.assertEqual(self.confirm(2, expected=409)["confirm_state"], "rolled-back")
        entry = AuditEntry.objects.get(action="automatic-rollback")
        self.assertEqual((entry.actor_name, entry.object_type, entry.object_name), ("system", "revision", "r3"))
        self.assertEqual(entry.detail, "automatic rollback: r2 not confirmed within 10 s")
        # The management command (systemd timer) does the same.
        Member.objects.filter(name="s1").update(weight=4)
        self.apply(confirm_within_s=10)
        Revision.objects.filter(number=4).update(confirm_by=timezone.now() - timedelta(seconds=1))
        out = io.StringIO()
        call_command("fulcrum_expire_confirmations", stdout=out)
        self.assertEqual(out.getvalue(), "automatic rollback: r4 not confirmed within 10 s: published r5\n")
        self.assertEqual(Revision.objects.get(number=5).rollback_of, 3)
        self.assertEqual(Member.objects.get(name="s1").weight, 1)
        # As the appliance runs it: a loop that finds the next expired revision on a later round.
        Member.objects.filter(name="s1").update(weight=6)
        self.apply(confirm_within_s=10)
        Revision.objects.filter(number=6).update(confirm_by=timezone.now() + timedelta(seconds=1))
        out = io.StringIO()
        call_command("fulcrum_expire_confirmations", every=0.25, rounds=8, stdout=out)
        lines = out.getvalue().splitlines()
        self.assertTrue(lines[0].startswith("a revision awaits confirmation until "), lines)
        # Rolled back once, on the first round past the deadline; later rounds have nothing to say.
        self.assertEqual(lines[-1], "automatic rollback: r6 not confirmed within 10 s: published r7")
        self.assertEqual(sum("automatic rollback" in line for line in lines), 1, lines)
        self.assertEqual(Member.objects.get(name="s1").weight, 1)
        with self.assertRaisesMessage(CommandError, "--every must be from 0.1 to 3600 seconds"):
            call_command("fulcrum_expire_confirmations", every=0)

    def test_a_late_confirmation_rolls_back_and_is_refused(self):
        self.apply()
        self.apply(confirm_within_s=10, force=True)
        Revision.objects.filter(number=2).update(confirm_by=timezone.now() - timedelta(seconds=1))
        self.assertEqual(self.confirm(2, expected=409)["confirm_state"], "rolled-back")
        self.assertEqual(Revision.objects.get(number=3).rollback_of, 1)

    def test_an_automatic_rollback_that_cannot_be_made_says_why(self):
        self.apply()
        www = VirtualService.objects.get(name="www")
        fresh = post(self.admin, "certificates/generate/", {"name": "fresh", "common_name": "www.example.com"})
        self.admin.patch(f"/api/v1/virtual-services/{www.pk}/", {"default_certificate": fresh["id"]}, format="json")
        site = Certificate.objects.get(name="site")
        self.assertEqual(self.admin.delete(f"/api/v1/certificates/{site.pk}/").status_code, 204)
        self.apply(confirm_within_s=10)
        Revision.objects.filter(number=2).update(confirm_by=timezone.now() - timedelta(seconds=1))
        with self.assertLogs("revisions.rollback", "ERROR"):
            detail = self.revision(2)
        self.assertEqual(detail["confirm_state"], "rollback-failed")
        self.assertEqual(Revision.objects.count(), 2)
        self.assertIn("certificates/site", detail["confirm_problem"])
        entry = AuditEntry.objects.get(action="automatic-rollback")
        self.assertEqual((entry.object_name, entry.status_code), ("r2", 500))
        self.assertIn("certificates/site", entry.detail)
        self.assertEqual(VirtualService.objects.get(name="www").default_certificate.name, "fresh")
        refused = self.confirm(2, expected=409)
        self.assertIn("no longer stored", refused["detail"])

    def test_a_rollback_never_registers_a_deleted_node_again(self):
        self.apply()
        group = self.admin.get("/api/v1/ha-groups/").data["results"][0]
        lb1 = Node.objects.get(name="lb1").pk
        keep = [{"node": lb1, "priority": 150}]
        self.admin.patch(f"/api/v1/ha-groups/{group['id']}/", {"nodes": keep}, format="json")
        self.assertEqual(self.admin.delete(f"/api/v1/nodes/{Node.objects.get(name='lb2').pk}/").status_code, 204)
        self.apply()
        response = self.admin.post(
            f"/api/v1/revisions/{Revision.objects.get(number=1).pk}/rollback/", {}, format="json"
        )
        self.assertEqual(response.status_code, 400, response.data)
        reasons = [(p["path"], p["message"]) for p in response.data["problems"]]
        self.assertIn(("ha-groups/front/nodes/lb2", "no node named 'lb2'"), reasons)
        self.assertFalse(Node.objects.filter(name="lb2").exists())
        self.assertEqual(Revision.objects.count(), 2)

    def test_bad_confirm_windows_are_refused(self):
        for seconds in (9, 3601, "soon"):
            response = self.admin.post("/api/v1/revisions/", {"confirm_within_s": seconds}, format="json")
            self.assertEqual(response.status_code, 400, response.data)
            self.assertIn("confirm_within_s", response.data)
        self.assertFalse(Revision.objects.exists())


class NodeOutcomeTest(RevisionTestCase):
    def test_a_failed_apply_shows_the_reason_and_the_revision_the_node_runs(self):
        agent = agent_client(self.tokens["lb1"])
        first = self.apply()["number"]
        self.assertEqual(agent.get("/api/v1/agent/desired/?known=0").status_code, 200)
        agent.post(
            "/api/v1/agent/reports/",
            {"revision": first, "state": "applied", "message": "applied haproxy"},
            format="json",
        )
        Member.objects.filter(name="s1").update(weight=2)
        second = self.apply()["number"]
        self.assertEqual(agent.get(f"/api/v1/agent/desired/?known={first}").status_code, 200)
        reason = "haproxy -c: [ALERT] cannot bind socket; restored the last good files"
        report = {"revision": second, "state": "failed", "message": reason}
        self.assertEqual(agent.post("/api/v1/agent/reports/", report, format="json").status_code, 204)
        listed = self.admin.get("/api/v1/revisions/").data["results"][0]
        detail = self.revision(second)
        for shown in (listed, detail):
            lb1 = next(n for n in shown["nodes"] if n["node"] == "lb1")
            self.assertEqual((lb1["state"], lb1["message"], lb1["running_revision"]), ("failed", reason, first))
            lb2 = next(n for n in shown["nodes"] if n["node"] == "lb2")
            self.assertEqual((lb2["state"], lb2["running_revision"]), ("pending", None))
            self.assertFalse(shown["live"])


class RolesTest(RevisionTestCase):
    """Operators apply, roll back and confirm; viewers only read; only admins see backups."""

    def person(self, name, role):
        from accounts.models import Profile

        user = get_user_model().objects.create_user(name, password="x" * 12)
        Profile.objects.update_or_create(user=user, defaults={"role": role})
        client = APIClient()
        client.force_authenticate(get_user_model().objects.get(pk=user.pk))  # not the cached profile
        return client

    def test_operator_and_viewer(self):
        operator, viewer = self.person("op", "operator"), self.person("view", "viewer")
        self.assertEqual(viewer.post("/api/v1/revisions/", {}, format="json").status_code, 403)
        self.assertEqual(operator.post("/api/v1/revisions/", {"confirm_within_s": 60}, format="json").status_code, 201)
        first = Revision.objects.get(number=1).pk
        self.assertEqual(viewer.post(f"/api/v1/revisions/{first}/confirm/").status_code, 403)
        self.assertEqual(operator.post(f"/api/v1/revisions/{first}/confirm/").status_code, 200)
        self.assertEqual(viewer.post(f"/api/v1/revisions/{first}/rollback/", {}, format="json").status_code, 403)
        self.assertEqual(operator.post(f"/api/v1/revisions/{first}/rollback/", {}, format="json").status_code, 201)
        self.assertEqual(viewer.get("/api/v1/revisions/pending/").status_code, 200)
        self.assertEqual(Revision.objects.count(), 2)
        document = self.admin.get("/api/v1/backup/").content
        for person in (operator, viewer):
            self.assertEqual(person.get("/api/v1/backup/").status_code, 403)
            body = {"document": json.loads(document), "dry_run": True}
            self.assertEqual(person.post("/api/v1/backup/restore/", body, format="json").status_code, 403)
