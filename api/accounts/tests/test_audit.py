"""The audit log: every change through the API and every sign-in event, with who, when,
from where, what (a field diff) and how it went; secrets never shown; node agents not
recorded; filters; CSV and JSON Lines exports; read only."""

import csv
import io
import json
from datetime import timedelta

from django.utils import timezone
from rest_framework.test import APIClient, APITestCase

from accounts.audit import record_event
from accounts.choices import Role
from accounts.models import AuditEntry
from accounts.tests.people import PASSWORD, bearer, forget_throttles, person, signed_in
from cluster.models import Node
from services.models import Member, Pool

AUDIT = "/api/v1/audit/"


class AuditTestCase(APITestCase):
    def setUp(self):
        forget_throttles()
        self.admin = person("root", Role.ADMIN)
        self.api, self.token, self.secret = bearer(self.admin, name="deploy")

    def latest(self, **lookup):
        return AuditEntry.objects.filter(**lookup).order_by("-id").first()

    def all_text(self):
        return json.dumps(list(AuditEntry.objects.values()), default=str)


class ChangesTest(AuditTestCase):
    def test_a_patch_records_the_exact_field_diff(self):
        pool = Pool.objects.create(name="web", algorithm="round-robin")
        response = self.api.patch(
            f"/api/v1/pools/{pool.pk}/", {"algorithm": "least-connections"}, format="json", REMOTE_ADDR="192.0.2.10"
        )
        self.assertEqual(response.status_code, 200, response.data)
        entry = self.latest()
        self.assertEqual(entry.changes, {"algorithm": ["round-robin", "least-connections"]})
        self.assertEqual(
            (entry.actor_name, entry.actor, entry.token_name, entry.address, entry.method, entry.path),
            ("root", self.admin, "deploy", "192.0.2.10", "PATCH", f"/api/v1/pools/{pool.pk}/"),
        )
        self.assertEqual(
            (entry.action, entry.object_type, entry.object_id, entry.object_name, entry.status_code),
            ("update", "pool", str(pool.pk), "web", 200),
        )
        self.assertEqual(entry.body, {"algorithm": "least-connections"})
        self.assertLess(abs((timezone.now() - entry.time).total_seconds()), 30)

    def test_create_lists_new_values_and_delete_the_old(self):
        created = self.api.post("/api/v1/pools/", {"name": "app"}, format="json").data
        entry = self.latest()
        self.assertEqual((entry.action, entry.object_type, entry.object_name), ("create", "pool", "app"))
        self.assertEqual(entry.changes["name"], "app")
        self.assertIn("algorithm", entry.changes)
        self.assertNotIn("version", entry.changes)
        member = self.api.post(
            "/api/v1/members/", {"pool": created["id"], "name": "m1", "address": "10.0.0.1", "port": 80}, format="json"
        ).data
        self.assertEqual(self.latest().changes["pool"], created["id"])
        self.assertEqual(self.api.delete(f"/api/v1/members/{member['id']}/").status_code, 204)
        entry = self.latest()
        self.assertEqual((entry.action, entry.object_type, entry.object_name), ("delete", "member", "app/m1"))
        self.assertEqual((entry.changes["address"], entry.changes["port"]), ("10.0.0.1", 80))

    def test_a_refused_write_is_recorded_with_its_status_and_changes_nothing(self):
        viewer, _, _ = bearer(person("watcher", Role.VIEWER), name="ro")
        pool = Pool.objects.create(name="web")
        self.assertEqual(viewer.patch(f"/api/v1/pools/{pool.pk}/", {"name": "x"}, format="json").status_code, 403)
        entry = self.latest()
        self.assertEqual(
            (entry.actor_name, entry.token_name, entry.action, entry.status_code, entry.object_name),
            ("watcher", "ro", "update", 403, "web"),
        )
        self.assertEqual((entry.changes, entry.body), ({}, {"name": "x"}))
        bad = self.api.post("/api/v1/pools/", {"name": "bad name!"}, format="json")
        self.assertEqual(bad.status_code, 400)
        entry = self.latest()
        self.assertEqual((entry.action, entry.status_code, entry.body), ("create", 400, {"name": "bad name!"}))
        anonymous = APIClient().post("/api/v1/pools/", {"name": "p"}, format="json")
        self.assertEqual(anonymous.status_code, 401)
        self.assertEqual((self.latest().actor_name, self.latest().status_code), ("", 401))
        # A body the parser refuses (PostgreSQL could not store it either) is only measured.
        for raw in (b'{"name": NaN}', b'{"\\ud800": 1}', b"\xff"):
            answer = self.api.generic("POST", "/api/v1/pools/", raw, content_type="application/json")
            self.assertEqual(answer.status_code, 400)
            entry = self.latest()
            self.assertEqual((entry.status_code, entry.body), (400, {"(body)": f"{len(raw)} bytes, not JSON"}))

    def test_runtime_and_apply_are_named_and_keep_the_body(self):
        pool = Pool.objects.create(name="web")
        member = Member.objects.create(pool=pool, name="m1", address="10.0.0.1", port=80)
        operator, _, _ = bearer(person("ops", Role.OPERATOR), name="oncall")
        operator.post(f"/api/v1/members/{member.pk}/runtime/", {"state": "drain"}, format="json")
        entry = self.latest()
        self.assertEqual(
            (entry.actor_name, entry.action, entry.object_type, entry.object_name, entry.status_code),
            ("ops", "runtime", "member", "web/m1", 409),
        )
        self.assertEqual(entry.body, {"state": "drain"})
        applied = operator.post("/api/v1/revisions/", {"message": "first"}, format="json")
        entry = self.latest()
        self.assertEqual(
            (entry.action, entry.object_type, entry.status_code), ("apply", "revision", applied.status_code)
        )
        if applied.status_code == 201:
            self.assertEqual(entry.changes["message"], "first")
            self.assertEqual(entry.object_name, f"r{applied.data['number']}")

    def test_a_session_write_is_recorded_too(self):
        client = signed_in("root")
        csrf = client.cookies["csrftoken"].value
        client.post("/api/v1/pools/", {"name": "console"}, format="json", HTTP_X_CSRFTOKEN=csrf)
        entry = self.latest()
        self.assertEqual((entry.actor_name, entry.token_name, entry.object_name), ("root", "", "console"))

    def test_node_agents_are_not_recorded(self):
        node = Node(name="lb1")
        token = node.rotate_token()
        node.save()
        agent = APIClient()
        agent.credentials(HTTP_AUTHORIZATION=f"Node {token}")
        before = AuditEntry.objects.count()
        response = agent.post("/api/v1/agent/status/", {"networks": ["10.0.0.2/24"]}, format="json")
        self.assertEqual(response.status_code, 204, response.data)
        self.assertEqual(agent.post("/api/v1/agent/status/", {"networks": "bad"}, format="json").status_code, 400)
        self.assertEqual(AuditEntry.objects.count(), before)
        node.refresh_from_db()
        self.assertEqual(node.networks, ["10.0.0.2/24"])

    def test_record_event_outside_a_request(self):
        pool = Pool.objects.create(name="web")
        entry = record_event("rollback", actor_name="system", obj=pool, detail="not confirmed in 60 s")
        listed = self.api.get(AUDIT, {"action": "rollback"}).data["results"]
        self.assertEqual(len(listed), 1)
        self.assertEqual(
            (listed[0]["id"], listed[0]["actor"], listed[0]["object_type"], listed[0]["status"]),
            (entry.pk, "system", "pool", None),
        )


class SecretsTest(AuditTestCase):
    def test_secrets_never_reach_the_log(self):
        # An HA group with a VRRP password, created and then changed.
        node = Node.objects.create(name="lb1", address="10.0.1.3", token_hash="x" * 64)
        body = {
            "name": "front",
            "vrid": 51,
            "vrrp_version": 2,
            "vips": ["10.0.0.10"],
            "auth_password": "s3cr3tpw",
            "nodes": [{"node": node.pk, "priority": 150}],
        }
        created = self.api.post("/api/v1/ha-groups/", body, format="json")
        self.assertEqual(created.status_code, 201, created.data)
        self.assertEqual(self.latest().changes["auth_password"], "(secret)")
        patched = self.api.patch(f"/api/v1/ha-groups/{created.data['id']}/", {"auth_password": "n3wpw"}, format="json")
        self.assertEqual(patched.status_code, 200, patched.data)
        self.assertEqual(self.latest().changes, {"auth_password": "(changed)"})
        self.assertEqual(self.latest().body, {"auth_password": "(secret)"})
        applied = self.api.post("/api/v1/revisions/", {"message": "with a VRRP password"}, format="json")
        self.assertEqual(applied.status_code, 201, applied.data)
        # A person with a password; a password change; an API token; a certificate's key.
        self.api.post("/api/v1/users/", {"username": "alice", "password": "alice's long passphrase"}, format="json")
        self.assertEqual(self.latest().changes["password"], "(secret)")
        self.assertEqual(self.latest().changes["role"], "viewer")
        token = self.api.post("/api/v1/tokens/", {"name": "ci"}, format="json").data["token"]
        key = self.api.post("/api/v1/certificates/generate/", {"name": "c", "common_name": "a.example"}, format="json")
        self.assertEqual(key.status_code, 201, key.data)
        self.assertEqual(self.latest().changes["private_key"], "(secret)")
        self.api.post("/api/v1/users/", {"username": "bob", "password": "short"}, format="json")  # refused: body kept
        self.assertEqual(self.latest().body["password"], "(secret)")
        from certificates.models import Certificate

        private_key = Certificate.objects.get(name="c").private_key
        text = self.all_text()
        for secret in ("s3cr3tpw", "n3wpw", "alice's long passphrase", "short", token, self.secret, private_key):
            self.assertNotIn(secret, text)
        self.assertNotIn(private_key.splitlines()[1], text)


class EventsTest(AuditTestCase):
    def test_sign_in_events(self):
        self.client.post("/api/v1/auth/login/", {"username": "root", "password": "nope"}, format="json")
        failed = self.latest()
        self.assertEqual(
            (failed.action, failed.actor_name, failed.actor, failed.status_code),
            ("sign-in-failed", "root", self.admin, 403),
        )
        self.client.post("/api/v1/auth/login/", {"username": "nobody", "password": "nope"}, format="json")
        self.assertEqual((self.latest().actor_name, self.latest().actor), ("nobody", None))
        client = signed_in("root", enforce_csrf_checks=False, REMOTE_ADDR="192.0.2.5")
        entry = self.latest()
        self.assertEqual(
            (entry.action, entry.actor_name, entry.address, entry.status_code), ("sign-in", "root", "192.0.2.5", 200)
        )
        client.post("/api/v1/auth/logout/")
        self.assertEqual((self.latest().action, self.latest().actor_name), ("sign-out", "root"))
        made = self.client.post(
            "/api/v1/auth/token/", {"username": "root", "password": PASSWORD, "name": "cli"}, format="json"
        )
        entry = self.latest()
        self.assertEqual(
            (entry.action, entry.token_name, entry.object_type, entry.object_name),
            ("sign-in", "cli", "api-token", "cli"),
        )
        self.assertNotIn(made.data["token"], self.all_text())
        # Refused before the view looks at the credentials: still a failed sign-in, password hidden.
        self.client.post("/api/v1/auth/login/", {"username": "root", "password": "nope", "x": 1}, format="json")
        self.client.post("/api/v1/auth/token/", {"username": "root", "password": "nope", "role": "god"}, format="json")
        entry = self.latest()
        self.assertEqual((entry.action, entry.status_code, entry.path), ("sign-in-failed", 400, "/api/v1/auth/token/"))
        self.assertEqual(entry.body, {"username": "root", "password": "(secret)", "role": "god"})
        # The password was never stored, failed attempts included.
        self.assertNotIn("nope", self.all_text())
        self.assertNotIn(PASSWORD, self.all_text())

    def test_token_create_and_revoke(self):
        made = self.api.post("/api/v1/tokens/", {"name": "ci", "role": "viewer"}, format="json").data
        entry = self.latest()
        self.assertEqual((entry.action, entry.object_type, entry.object_name), ("create", "api-token", "ci"))
        self.assertEqual((entry.changes["role"], entry.changes["token_hash"]), ("viewer", "(secret)"))
        self.api.delete(f"/api/v1/tokens/{made['id']}/")
        entry = self.latest()
        self.assertEqual((entry.action, entry.object_name, list(entry.changes)), ("revoke", "ci", ["revoked_at"]))
        self.assertIsNone(entry.changes["revoked_at"][0])

    def test_password_change_and_user_role_change(self):
        person("bob", Role.VIEWER)
        bob = signed_in("bob", enforce_csrf_checks=False)
        bob.post(
            "/api/v1/auth/password/", {"old_password": PASSWORD, "new_password": "bob's new passphrase"}, format="json"
        )
        entry = self.latest()
        self.assertEqual(
            (entry.action, entry.actor_name, entry.changes), ("password-change", "bob", {"password": "(changed)"})
        )
        user_id = entry.object_id
        self.api.patch(f"/api/v1/users/{user_id}/", {"role": "operator"}, format="json")
        entry = self.latest()
        self.assertEqual((entry.action, entry.object_type, entry.object_name), ("update", "user", "bob"))
        self.assertEqual(entry.changes, {"role": ["viewer", "operator"]})


class AuditApiTest(AuditTestCase):
    def setUp(self):
        super().setUp()
        self.ops, _, _ = bearer(person("ops", Role.OPERATOR), name="oncall")
        Pool.objects.create(name="web")
        self.api.post("/api/v1/pools/", {"name": "app"}, format="json")
        self.api.patch(f"/api/v1/pools/{Pool.objects.get(name='web').pk}/", {"name": "www"}, format="json")
        self.ops.post("/api/v1/pools/", {"name": "nope"}, format="json")  # 403
        self.client.post("/api/v1/auth/login/", {"username": "root", "password": "wrong"}, format="json")
        old = record_event("update", actor_name="root", object_type="pool", object_name="ancient")
        AuditEntry.objects.filter(pk=old.pk).update(time=timezone.now() - timedelta(days=10))

    def names(self, **params):
        response = self.ops.get(AUDIT, params)
        self.assertEqual(response.status_code, 200, response.data)
        return [(e["actor"], e["action"], e["object_name"]) for e in response.data["results"]]

    def test_newest_first_and_paginated(self):
        everything = self.names()
        self.assertEqual(everything[0], ("root", "sign-in-failed", ""))
        self.assertEqual(everything[-1], ("root", "update", "ancient"))
        page = self.ops.get(AUDIT, {"limit": 2, "offset": 1}).data
        self.assertEqual(page["count"], len(everything))
        self.assertEqual([(e["actor"], e["action"], e["object_name"]) for e in page["results"]], everything[1:3])

    def test_filters(self):
        self.assertEqual(self.names(actor="ops"), [("ops", "create", "nope")])
        self.assertEqual({a for _, a, _ in self.names(action="create,update")}, {"create", "update"})
        self.assertEqual(self.names(object_type="pool", object_name="WWW"), [("root", "update", "www")])
        self.assertEqual(self.names(status="failed"), [("root", "sign-in-failed", ""), ("ops", "create", "nope")])
        self.assertEqual(len(self.names(status="403")), 2)
        self.assertNotIn(
            ("root", "update", "ancient"), self.names(since=(timezone.now() - timedelta(days=1)).isoformat())
        )
        self.assertEqual(
            self.names(until=(timezone.now() - timedelta(days=1)).date().isoformat()), [("root", "update", "ancient")]
        )
        self.assertEqual(self.names(q="anc"), [("root", "update", "ancient")])
        self.assertEqual(len(self.names(q="/api/v1/pools/")), 3)
        for params, field in (
            ({"since": "yesterday"}, "since"),
            ({"until": "2025-13-01"}, "until"),
            ({"status": "meh"}, "status"),
        ):
            response = self.ops.get(AUDIT, params)
            self.assertEqual(response.status_code, 400, params)
            self.assertIn(field, response.data)

    def test_csv_export_parses_back(self):
        response = self.ops.get(f"{AUDIT}export/", {"format": "csv", "actor": "root"})
        self.assertEqual(response.status_code, 200)
        self.assertTrue(response["Content-Type"].startswith("text/csv"))
        self.assertRegex(response["Content-Disposition"], r'^attachment; filename="fulcrum-audit-.*\.csv"$')
        rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
        listed = self.ops.get(AUDIT, {"actor": "root"}).data["results"]
        self.assertEqual([int(r["id"]) for r in rows], [e["id"] for e in listed])
        patch = next(r for r in rows if r["action"] == "update" and r["object_name"] == "www")
        self.assertEqual(json.loads(patch["changes"]), {"name": ["web", "www"]})
        self.assertEqual((patch["token"], patch["status"], patch["method"]), ("deploy", "200", "PATCH"))

    def test_jsonl_export_parses_back(self):
        response = self.ops.get(f"{AUDIT}export/", {"format": "jsonl", "status": "ok"})
        self.assertEqual(response.status_code, 200)
        self.assertTrue(response["Content-Type"].startswith("application/jsonl"))
        self.assertIn(".jsonl", response["Content-Disposition"])
        lines = b"".join(response.streaming_content).decode().splitlines()
        entries = [json.loads(line) for line in lines]
        listed = self.ops.get(AUDIT, {"status": "ok"}).data["results"]
        self.assertEqual([e["id"] for e in entries], [e["id"] for e in listed])
        self.assertEqual(next(e for e in entries if e["object_name"] == "www")["changes"], {"name": ["web", "www"]})

    def test_export_rejects_an_unknown_format_and_viewers(self):
        response = self.ops.get(f"{AUDIT}export/", {"format": "xml"})
        self.assertEqual(response.status_code, 400)
        self.assertIn("format", response.json())
        viewer, _, _ = bearer(person("watcher", Role.VIEWER))
        self.assertEqual(viewer.get(f"{AUDIT}export/").status_code, 403)

    def test_a_spreadsheet_formula_is_defused(self):
        record_event("update", actor_name="x", object_name="=HYPERLINK(1)")
        rows = list(csv.DictReader(io.StringIO(b"".join(self.ops.get(f"{AUDIT}export/").streaming_content).decode())))
        self.assertEqual(rows[0]["object_name"], "'=HYPERLINK(1)")

    def test_the_log_cannot_be_changed(self):
        entry = AuditEntry.objects.first()
        for method in ("post", "put", "patch", "delete"):
            url = AUDIT if method == "post" else f"{AUDIT}{entry.pk}/"
            self.assertEqual(getattr(self.api, method)(url, {"action": "x"}, format="json").status_code, 405, method)
        self.assertEqual(AuditEntry.objects.get(pk=entry.pk).action, entry.action)
        self.assertTrue(AuditEntry.objects.filter(pk=entry.pk).exists())
