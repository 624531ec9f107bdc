"""Joining an appliance with a one-time join code: making codes (admins only), the signed
discovery answer, the join itself, and every refusal (which must change nothing)."""

import hashlib
import hmac
import io
import json
import tempfile
from datetime import timedelta
from pathlib import Path
from unittest import mock

from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import TransactionTestCase
from django.utils import timezone
from rest_framework.test import APIClient, APITestCase

from accounts.choices import AuditAction, Role
from accounts.models import AuditEntry
from accounts.tests.people import bearer, forget_throttles, person
from cluster import joincode
from cluster.models import JoinCode, Node
from services.models import Pool

VERSION = "1.4.0~git7.gabc1234"
CERT = "-----BEGIN CERTIFICATE-----\nMIIBtest\n-----END CERTIFICATE-----\n"


class JoinTest(APITestCase):
    def setUp(self):
        forget_throttles()
        self.admin, _, _ = bearer(person("root", Role.ADMIN))
        cert = tempfile.NamedTemporaryFile("w", suffix=".crt", delete=False)  # noqa: SIM115
        cert.write(CERT)
        cert.close()
        overrides = self.settings(FULCRUM_VERSION=VERSION, FULCRUM_CONSOLE_CERT=cert.name)
        overrides.enable()
        self.addCleanup(overrides.disable)
        self.new = APIClient()  # the joining appliance: nobody is signed in

    def make_code(self):
        answer = self.admin.post("/api/v1/join-codes/", format="json")
        self.assertEqual(answer.status_code, 201, answer.data)
        return answer.data

    def ask(self, code, **changes):
        body = {"join_code": code, "name": "lb2", "address": "192.0.2.12", "version": VERSION,
                "time": timezone.now().isoformat(), **changes}  # fmt: skip
        return self.new.post("/api/v1/cluster/join/", body, format="json", REMOTE_ADDR="192.0.2.12")

    def assert_refused(self, answer, status, field, words, name="lb2"):
        self.assertEqual(answer.status_code, status, answer.data)
        self.assertIn(words, answer.data[field][0])
        self.assertFalse(Node.objects.filter(name=name).exists())

    # -- making codes -------------------------------------------------------------------------

    def test_a_code_is_shown_once_and_listed_without_it(self):
        made = self.make_code()
        code = made["code"]
        self.assertRegex(code, r"^([0-9A-HJKMNP-TV-Z]{4}-){4}[0-9A-HJKMNP-TV-Z]{4}$")
        self.assertEqual(made["state"], "usable")
        self.assertEqual(made["created_by"], "root")
        lifetime = timezone.datetime.fromisoformat(made["expires_at"]) - timezone.now()
        self.assertTrue(timedelta(minutes=29) < lifetime <= timedelta(minutes=30), lifetime)
        listed = self.admin.get("/api/v1/join-codes/").data["results"]
        self.assertEqual([row["code_id"] for row in listed], [code[:4]])
        self.assertNotIn("code", listed[0])
        self.assertNotIn(code.replace("-", "")[4:], json.dumps(listed))
        # The audit log has the creation, never the secret.
        entry = AuditEntry.objects.get(object_type="join-code")
        self.assertEqual(entry.actor_name, "root")
        self.assertNotIn(code.replace("-", "")[4:], json.dumps([entry.changes, entry.body]))

    def test_only_admins_make_or_see_codes(self):
        for role in (Role.OPERATOR, Role.VIEWER):
            client, _, _ = bearer(person(f"a-{role}", role))
            self.assertEqual(client.post("/api/v1/join-codes/").status_code, 403, role)
            self.assertEqual(client.get("/api/v1/join-codes/").status_code, 403, role)
        self.assertEqual(self.new.post("/api/v1/join-codes/").status_code, 401)
        self.assertFalse(JoinCode.objects.exists())

    def test_a_revoked_code_does_not_work(self):
        made = self.make_code()
        self.assertEqual(self.admin.delete(f"/api/v1/join-codes/{made['id']}/").status_code, 204)
        self.assert_refused(self.ask(made["code"]), 400, "join_code", "Wrong join code")
        self.assertEqual(self.new.get(f"/api/v1/cluster/join/{made['code_id']}/").status_code, 404)

    # -- discovery --------------------------------------------------------------------------

    def test_discovery_is_signed_with_the_secret(self):
        made = self.make_code()
        answer = self.new.get(f"/api/v1/cluster/join/{made['code_id'].lower()}/")
        self.assertEqual(answer.status_code, 200, answer.data)
        secret = made["code"].replace("-", "")[4:]
        expected = hmac.new(secret.encode(), answer.data["info"].encode(), hashlib.sha256).hexdigest()
        self.assertTrue(hmac.compare_digest(answer.data["signature"], expected))
        info = json.loads(answer.data["info"])
        self.assertEqual(info, {"certificate": CERT, "version": VERSION})
        # A wrong secret does not verify it: a machine in the middle cannot sign another certificate.
        other = hmac.new(b"0" * 16, answer.data["info"].encode(), hashlib.sha256).hexdigest()
        self.assertNotEqual(answer.data["signature"], other)
        self.assertEqual(self.new.get("/api/v1/cluster/join/ZZZZ/").status_code, 404)

    # -- joining ------------------------------------------------------------------------------

    def test_join_registers_the_node_and_spends_the_code(self):
        made = self.make_code()
        typed = made["code"].lower().replace("-", " ").replace("0", "o")  # as a person may type it
        answer = self.ask(typed)
        self.assertEqual(answer.status_code, 201, answer.data)
        self.assertEqual((answer.data["node"], answer.data["version"]), ("lb2", VERSION))
        node = Node.objects.get(name="lb2")
        self.assertEqual(node.address, "192.0.2.12")
        # The token is the new node's agent credential.
        agent = APIClient()
        agent.credentials(HTTP_AUTHORIZATION=f"Node {answer.data['token']}")
        self.assertIn(agent.get("/api/v1/agent/desired/?known=0&wait=0").status_code, (200, 204))
        seen = Node.objects.get(pk=node.pk).last_seen
        self.assertIsNotNone(seen)
        # Where the database takes no changes (a standby, a fenced primary: the failover's
        # seconds), the agent's poll is answered without recording when the node was seen.
        with connection.cursor() as cursor:
            cursor.execute("SET default_transaction_read_only = on")  # undone with the test's transaction
        self.assertIn(agent.get("/api/v1/agent/desired/?known=0&wait=0").status_code, (200, 204))
        self.assertEqual(Node.objects.get(pk=node.pk).last_seen, seen)
        with connection.cursor() as cursor:
            cursor.execute("SET default_transaction_read_only = off")
        row = JoinCode.objects.get(pk=made["id"])
        self.assertEqual((row.node, row.secret), (node, ""))
        listed = self.admin.get("/api/v1/join-codes/").data["results"][0]
        self.assertEqual((listed["state"], listed["node"]), ("used", "lb2"))
        # Once only, and the discovery answer is gone with it.
        again = self.ask(made["code"], name="lb3", address="192.0.2.13")
        self.assert_refused(again, 400, "join_code", "already used", name="lb3")
        self.assertEqual(self.new.get(f"/api/v1/cluster/join/{made['code_id']}/").status_code, 404)
        entry = AuditEntry.objects.get(action=AuditAction.APPLIANCE_JOIN)
        self.assertEqual((entry.actor_name, entry.object_name, entry.address), ("appliance lb2", "lb2", "192.0.2.12"))
        code = made["code"].replace("-", "")
        for logged in AuditEntry.objects.all():
            self.assertNotIn(code[4:], json.dumps([logged.changes, logged.body, logged.detail]))
        # No replication secret here (a development database): nothing to offer.
        self.assertIsNone(answer.data["replication"])

    def test_the_join_offers_the_replication_password_and_a_slot_of_its_own(self):
        secret = "S" * 43
        with tempfile.NamedTemporaryFile("w", suffix=".secret") as f:
            f.write(secret + "\n")
            f.flush()
            with self.settings(FULCRUM_REPLICATION_SECRET=f.name):
                answer = self.ask(self.make_code()["code"], name="LB-2.b")
        self.assertEqual(answer.status_code, 201, answer.data)
        node = Node.objects.get(name="LB-2.b")
        offer = {"user": "fulcrum_replication", "password": secret, "port": 5432, "slot": f"lb_2_b_{node.pk}",
                 "management_vip": None, "console_key": None}  # fmt: skip
        self.assertEqual(answer.data["replication"], offer)
        for logged in AuditEntry.objects.all():
            self.assertNotIn(secret, json.dumps([logged.changes, logged.body, logged.detail]))

    def test_the_join_hands_over_the_management_vip_and_the_consoles_key(self):
        key = "-----BEGIN PRIVATE KEY-----\nMIGHAgEA\n-----END PRIVATE KEY-----\n"
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / "replication.secret").write_text("S" * 43 + "\n")
            (Path(folder) / "console.key").write_text(key)
            with self.settings(FULCRUM_REPLICATION_SECRET=f"{folder}/replication.secret",
                               FULCRUM_CONSOLE_KEY=f"{folder}/console.key", FULCRUM_MGMT_VIP="192.0.2.10"):  # fmt: skip
                answer = self.ask(self.make_code()["code"])
        self.assertEqual(answer.status_code, 201, answer.data)
        offer = answer.data["replication"]
        self.assertEqual((offer["management_vip"], offer["console_key"]), ("192.0.2.10", key))
        for logged in AuditEntry.objects.all():
            self.assertNotIn("MIGHAgEA", json.dumps([logged.changes, logged.body, logged.detail]))

    def test_refusals_change_nothing_and_say_why(self):
        made = self.make_code()
        code = made["code"]
        Node.objects.create(name="lb1", address="192.0.2.11", token_hash="x" * 64)
        cases = [
            (self.ask(code[:-1] + ("1" if code[-1] != "1" else "2")), 400, "join_code", "Wrong join code"),
            (self.ask("not a code"), 400, "join_code", "Wrong join code"),
            (self.ask(code, version="1.3.9"), 400, "version", "runs Fulcrum 1.3.9, the cluster runs " + VERSION),
            (self.ask(code, time=(timezone.now() + timedelta(minutes=5)).isoformat()), 400, "time", "ahead of"),
            (self.ask(code, time=(timezone.now() - timedelta(hours=2)).isoformat()), 400, "time", "7200 s behind"),
            (self.ask(code, name="lb1", address="192.0.2.99"), 409, "name", "already in this cluster"),
            (self.ask(code, address="192.0.2.11"), 409, "address", "already the address of lb1"),
        ]
        for answer, status, field, words in cases:
            with self.subTest(field=field, words=words):
                self.assert_refused(answer, status, field, words)
        self.assertEqual(Node.objects.count(), 1)
        self.assertIsNone(JoinCode.objects.get().used_at)
        self.assertEqual(AuditEntry.objects.filter(action=AuditAction.APPLIANCE_JOIN_REFUSED).count(), len(cases))
        # A clock 30 s off is fine, and the code still works after all those refusals.
        self.assertEqual(self.ask(code, time=(timezone.now() + timedelta(seconds=30)).isoformat()).status_code, 201)

    def test_an_expired_code_says_so(self):
        made = self.make_code()
        JoinCode.objects.filter(pk=made["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
        self.assert_refused(self.ask(made["code"]), 400, "join_code", "expired at")
        self.assertEqual(self.admin.get("/api/v1/join-codes/").data["results"][0]["state"], "expired")
        self.assertEqual(self.new.get(f"/api/v1/cluster/join/{made['code_id']}/").status_code, 404)

    def test_bad_fields_are_refused_on_the_field(self):
        made = self.make_code()
        for changes, field in [({"name": "lb2;reboot"}, "name"), ({"address": "lb2"}, "address"),
                               ({"time": "yesterday"}, "time"), ({"version": ""}, "version")]:  # fmt: skip
            with self.subTest(field=field):
                answer = self.ask(made["code"], **changes)
                self.assertEqual(answer.status_code, 400, answer.data)
                self.assertIn(field, answer.data)
        extra = self.new.post("/api/v1/cluster/join/", {"join_code": made["code"], "role": "admin"}, format="json")
        self.assertEqual(extra.status_code, 400)
        self.assertIsNone(JoinCode.objects.get().used_at)

    def test_guessing_is_throttled_per_address(self):
        made = self.make_code()
        for _ in range(10):
            self.assertEqual(self.ask("0000-0000-0000-0000-0000").status_code, 400)
        self.assertEqual(self.ask(made["code"]).status_code, 429)
        self.assertIsNone(JoinCode.objects.get().used_at)


class CodeTest(APITestCase):
    def test_parse(self):
        self.assertEqual(joincode.parse("K7QM-W2XD-9HRT-5BNP-3CAZ"), ("K7QM", "W2XD9HRT5BNP3CAZ"))
        self.assertEqual(joincode.parse(" k7qm w2xd 9hrt 5bnp 3caz\n"), ("K7QM", "W2XD9HRT5BNP3CAZ"))
        self.assertEqual(joincode.parse("K7QM-W2XD-9HRT-5BNP-3CAO"), ("K7QM", "W2XD9HRT5BNP3CA0"))
        self.assertEqual(joincode.parse("l7qm-w2xd-9hrt-5bnp-3caz"), ("17QM", "W2XD9HRT5BNP3CAZ"))
        for bad in (
            "",
            "K7QM-W2XD-9HRT-5BNP",
            "K7QM-W2XD-9HRT-5BNP-3CAZ-0",
            "K7QM-W2XD-9HRT-5BNP-3CA!",
            "U" * 20,
            None,
        ):
            self.assertIsNone(joincode.parse(bad), bad)


class MembershipTest(APITestCase):
    def test_an_appliance_of_its_own_cluster(self):
        with self.settings(FULCRUM_CLUSTER_ENV="/nonexistent/cluster.env"):
            self.assertEqual(
                APIClient().get("/api/v1/cluster/").data,
                {"member_of": None, "node": None, "read_only": None, "primary": None},
            )

    def test_a_joined_appliance_names_the_clusters_console(self):
        with tempfile.NamedTemporaryFile("w", suffix=".env") as env:
            env.write(
                "# Written by fulcrum-setup\nFULCRUM_CLUSTER_JOINED=[2001:db8::15]:8443\nFULCRUM_CLUSTER_NODE=lb2\n"
            )
            env.flush()
            with self.settings(FULCRUM_CLUSTER_ENV=env.name):
                answer = APIClient().get("/api/v1/cluster/")
        self.assertEqual(answer.status_code, 200)
        self.assertEqual(
            answer.data,
            {"member_of": "https://[2001:db8::15]:8443/", "node": "lb2", "read_only": None,
             "primary": "https://[2001:db8::15]:8443/"},
        )  # fmt: skip

    def test_a_fenced_primary_refuses_changes_and_names_the_management_vip(self):
        client, _token, _secret = bearer(person("fence-admin", Role.ADMIN))
        # What the management VIP's keepalived does to a primary that does not hold the VIP.
        with connection.cursor() as cursor:
            cursor.execute("SET default_transaction_read_only = on")  # undone with the test's transaction
        with self.settings(FULCRUM_CLUSTER_ENV="/nonexistent/cluster.env", FULCRUM_MGMT_VIP="192.0.2.10"):
            seen = APIClient().get("/api/v1/cluster/").data
            refused = client.post("/api/v1/join-codes/", {}, format="json")
        self.assertEqual((seen["read_only"], seen["primary"]), ("fenced", "https://192.0.2.10/"))
        self.assertEqual(refused.status_code, 503, refused.content)
        self.assertEqual(refused.json()["primary"], "https://192.0.2.10/")
        self.assertIn("does not hold the cluster's management address", refused.json()["detail"])
        self.assertFalse(JoinCode.objects.exists())

    def test_a_tampered_file_names_nothing(self):
        with tempfile.NamedTemporaryFile("w", suffix=".env") as env:
            env.write('FULCRUM_CLUSTER_JOINED=evil.example/"><script>\nFULCRUM_CLUSTER_NODE=lb2\n')
            env.flush()
            with self.settings(FULCRUM_CLUSTER_ENV=env.name):
                self.assertEqual(APIClient().get("/api/v1/cluster/").data["member_of"], None)


class FencedMidRequestTest(TransactionTestCase):
    """The switchover fences the database between the standby middleware's check and the
    write: PostgreSQL refuses the INSERT (a real read-only transaction), and the answer is the
    503 naming the VIP that the check gives, not a 500."""

    def test_a_write_the_fence_catches_halfway_gets_503_not_500(self):
        client = APIClient()
        client.force_authenticate(person("race-admin", Role.ADMIN))
        with connection.cursor() as cursor:
            cursor.execute("SET default_transaction_read_only = on")  # what the fence sets
        try:
            # Every look says "takes changes", as the middleware's did just before the fence.
            with (
                mock.patch("cluster.standby.read_only", return_value=None),
                self.settings(FULCRUM_CLUSTER_ENV="/nonexistent/cluster.env", FULCRUM_MGMT_VIP="192.0.2.10"),
            ):
                refused = client.post("/api/v1/pools/", {"name": "raced", "algorithm": "round-robin"}, format="json")
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SET default_transaction_read_only = off")
        self.assertEqual(refused.status_code, 503, refused.content)
        self.assertEqual(refused.json()["primary"], "https://192.0.2.10/")
        self.assertIn("does not hold the cluster's management address", refused.json()["detail"])
        self.assertFalse(Pool.objects.filter(name="raced").exists())


class JoinCommandTest(APITestCase):
    """``fulcrum_join`` refuses before it asks anything of the network on an appliance that
    already belongs to a cluster."""

    def join(self):
        with mock.patch("sys.stdin", io.StringIO("K7QM-W2XD-9HRT-5BNP-3CAZ\n")):
            call_command("fulcrum_join", "127.0.0.1:1", "--name", "lb2", "--address", "192.0.2.12")

    def test_refused_on_an_appliance_with_its_own_cluster(self):
        Node.objects.create(name="lb1", token_hash="x" * 64)
        with self.settings(FULCRUM_CLUSTER_ENV="/nonexistent"), self.assertRaises(CommandError) as refused:
            self.join()
        self.assertIn("already runs a cluster of its own (nodes: lb1)", str(refused.exception))

    def test_refused_on_an_appliance_that_joined_one(self):
        with tempfile.NamedTemporaryFile("w", suffix=".env") as env:
            env.write("FULCRUM_CLUSTER_JOINED=192.0.2.1\nFULCRUM_CLUSTER_NODE=lb2\n")
            env.flush()
            with self.settings(FULCRUM_CLUSTER_ENV=env.name), self.assertRaises(CommandError) as refused:
                self.join()
        self.assertIn("already joined the cluster of https://192.0.2.1/", str(refused.exception))

    def test_a_fresh_appliance_goes_on_to_the_network(self):
        with self.settings(FULCRUM_CLUSTER_ENV="/nonexistent"), self.assertRaises(CommandError) as refused:
            self.join()  # nothing listens on port 1 of the loopback: the discovery fails
        self.assertIn("cannot reach the cluster at 127.0.0.1:1", str(refused.exception))
