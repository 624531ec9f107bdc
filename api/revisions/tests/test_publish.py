"""Apply: freeze, compile, check with the real haproxy, publish; and the agent protocol."""

from unittest import mock

from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient, APITestCase

from accounts.models import AuditEntry
from cluster.models import Node
from compiler import rules
from revisions.checks import check_haproxy, check_nftables
from revisions.diff import fingerprint
from revisions.models import NodeRevision, Revision
from services.models import HealthCheck, Member, Pool, VirtualService


def make_service():
    pool = Pool.objects.create(name="web")
    HealthCheck.objects.create(pool=pool, type="http", path="/health", interval_ms=1000, timeout_ms=500)
    for i in (1, 2, 3):
        Member.objects.create(pool=pool, name=f"s{i}", address=f"10.77.2.1{i}", port=80)
    VirtualService.objects.create(name="web", vip="10.77.100.10", port=80, default_pool=pool)


class PublishTest(APITestCase):
    def setUp(self):
        self.user = get_user_model().objects.create_superuser("ops", password="correct horse battery")
        self.client.force_authenticate(self.user)
        make_service()
        self.node = Node(name="lb1")
        self.token = self.node.rotate_token()
        self.node.save()

    def test_apply_freezes_compiles_and_publishes(self):
        response = self.client.post("/api/v1/revisions/", {"message": "first"}, format="json")
        self.assertEqual(response.status_code, 201, response.data)
        self.assertEqual(response.data["number"], 1)
        self.assertEqual(response.data["author"], "ops")
        self.assertEqual(response.data["nodes"], [{**response.data["nodes"][0], "node": "lb1", "state": "pending"}])
        revision = Revision.objects.get(number=1)
        self.assertEqual([m["name"] for m in revision.snapshot["pools"][0]["members"]], ["s1", "s2", "s3"])
        config = NodeRevision.objects.get(revision=revision, node=self.node).files["haproxy.cfg"]
        files = NodeRevision.objects.get(revision=revision, node=self.node).files
        self.assertTrue(check_haproxy(files).ok)
        self.assertIn("server s2 10.77.2.12:80", config)

    def test_a_revision_whose_author_was_deleted_says_null(self):
        """As the schema says (nullable): the user is gone, the revision stays."""
        author = get_user_model().objects.create_superuser("gone", password="correct horse battery")
        self.client.force_authenticate(author)
        number = self.client.post("/api/v1/revisions/", {"message": "by gone"}, format="json").data["number"]
        self.client.force_authenticate(self.user)
        author.delete()
        revision = self.client.get(f"/api/v1/revisions/{Revision.objects.get(number=number).pk}/").data
        self.assertIsNone(revision["author"])

    def test_revision_is_immutable_snapshot(self):
        self.client.post("/api/v1/revisions/", {}, format="json")
        Member.objects.filter(name="s3").delete()
        detail = self.client.get(f"/api/v1/revisions/{Revision.objects.get().pk}/").data
        self.assertEqual(len(detail["snapshot"]["pools"][0]["members"]), 3)
        self.assertEqual(self.client.patch(f"/api/v1/revisions/{Revision.objects.get().pk}/", {}).status_code, 405)
        self.assertEqual(self.client.delete(f"/api/v1/revisions/{Revision.objects.get().pk}/").status_code, 405)

    def test_config_rejected_by_haproxy_is_not_published(self):
        # Stand-in for a compiler bug: the renderer emits what the real haproxy refuses.
        broken = {"haproxy.cfg": b"frontend f\n    bind 10.0.0.1:notaport\n"}
        with mock.patch(
            "revisions.publish.render_haproxy_nodes", side_effect=lambda _, nodes, __: dict.fromkeys(nodes, broken)
        ):
            response = self.client.post("/api/v1/revisions/", {"message": "bad"}, format="json")
        self.assertEqual(response.status_code, 400)
        # The daemon named a section that is none of the operator's: the node's files.
        self.assertEqual(response.data["problems"][0]["path"], "nodes/lb1/haproxy")
        self.assertEqual(response.data["problems"][0]["object"], "node")
        # In HAProxy's own words (haproxy -c -q says nothing on 2.6), without its notices.
        message = response.data["problems"][0]["message"]
        self.assertIn("haproxy rejected the configuration: ALERT: config : parsing [<check>/haproxy.cfg:2]", message)
        self.assertIn("'notaport'", message)
        self.assertNotIn("NOTICE", message)
        self.assertFalse(Revision.objects.exists())
        self.assertFalse(NodeRevision.objects.exists())

    def test_a_refusal_names_the_object_and_field_and_quotes_haproxy(self):
        # A gap between verify and HAProxy, as there was before pages were held to HAProxy's
        # buffer: verify takes a 20,000-byte page again (as it did, up to 64 KiB), the row
        # holds one (written before the limit), and the real haproxy -c refuses it.
        pool = Pool.objects.get(name="web")
        Pool.objects.filter(pk=pool.pk).update(maintenance_page="x" * 20000)
        with mock.patch.object(rules, "MAINTENANCE_PAGE_MAX", 65_536):
            response = self.client.post("/api/v1/revisions/", {"message": "big page"}, format="json")
        self.assertEqual(response.status_code, 400, response.data)
        [problem] = response.data["problems"]
        self.assertEqual(problem["path"], "pools/web/maintenance_page")
        self.assertEqual((problem["object"], problem["name"], problem["id"]), ("pool", "web", pool.pk))
        self.assertEqual((problem["field"], problem["daemon"], problem["node"]), ("maintenance_page", "haproxy", "lb1"))
        # HAProxy's words, its place in the generated file included; all it said stays available.
        said = problem["daemon_message"]
        self.assertRegex(said, r"^ALERT: config : parsing \[<check>/haproxy.cfg:\d+\] : http-error")
        self.assertIn("'<check>/haproxy.d/pool-web.maintenance.html' exceeds the buffer size", said)
        self.assertEqual(problem["message"], f"haproxy rejected the configuration: {said}")
        self.assertIn(said, response.data["daemon_output"])
        self.assertFalse(Revision.objects.exists())

    def test_a_refusal_by_the_compiler_names_the_object_too(self):
        VirtualService.objects.filter(name="web").update(port=0)
        response = self.client.post("/api/v1/revisions/", {"message": "bad"}, format="json")
        self.assertEqual(response.status_code, 400, response.data)
        problem = next(p for p in response.data["problems"] if p["path"] == "virtual-services/web/port")
        self.assertEqual((problem["object"], problem["name"], problem["field"]), ("virtual-service", "web", "port"))
        self.assertEqual(problem["id"], VirtualService.objects.get(name="web").pk)
        self.assertEqual(
            (problem["daemon"], problem["daemon_message"], response.data["daemon_output"]), (None, None, None)
        )

    def test_the_bundle_opens_the_service_in_the_node_firewall(self):
        self.client.post("/api/v1/revisions/", {"message": "first"}, format="json")
        files = NodeRevision.objects.get(node=self.node).files
        self.assertIn("10.77.100.10 . tcp . 80", files["firewall.nft"])
        result = check_nftables(files)
        self.assertTrue(result.checked and result.ok, result.output)

    def test_firewall_script_rejected_by_nft_is_not_published(self):
        # Stand-in for a compiler bug: a set the appliance's baseline does not have.
        broken = {"firewall.nft": b"flush set inet fulcrum_firewall services5\n"}
        with mock.patch("revisions.publish.render_firewall", return_value=broken):
            response = self.client.post("/api/v1/revisions/", {"message": "bad"}, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.data["problems"][0]["path"], "nodes/lb1/nftables")
        self.assertIn("No such file or directory", response.data["problems"][0]["message"])
        self.assertFalse(Revision.objects.exists())

    def test_unknown_fields_refused(self):
        response = self.client.post("/api/v1/revisions/", {"message": "x", "colour": 9}, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertFalse(Revision.objects.exists())

    def test_numbers_increase(self):
        for _ in range(3):
            self.client.post("/api/v1/revisions/", {"force": True}, format="json")
        self.assertEqual(sorted(Revision.objects.values_list("number", flat=True)), [1, 2, 3])


class NothingToApplyTest(APITestCase):
    """An apply with nothing pending (as revisions/pending/ says) publishes nothing, unless forced."""

    def setUp(self):
        user = get_user_model().objects.create_superuser("ops", password="correct horse battery")
        self.client.force_authenticate(user)
        make_service()
        Node(name="lb1").save()

    def apply(self, **body):
        return self.client.post("/api/v1/revisions/", body, format="json")

    def pending(self):
        return self.client.get("/api/v1/revisions/pending/").data["pending"]

    def test_applying_twice_answers_nothing_to_apply_and_publishes_nothing(self):
        self.assertEqual(self.apply(message="first").status_code, 201)
        self.assertFalse(self.pending())
        last_entry = AuditEntry.objects.order_by("-id").first().pk
        response = self.apply(message="again")
        self.assertEqual(response.status_code, 409, response.data)
        self.assertEqual(
            response.json(),
            {
                "detail": "nothing to apply: the configuration is the same as revision 1",
                "code": "nothing_to_apply",
                "base_revision": 1,
            },
        )
        self.assertEqual(list(Revision.objects.values_list("number", flat=True)), [1])
        self.assertEqual(NodeRevision.objects.count(), 1)
        # The audit log keeps the refused attempt, as it keeps every refused write: no publish.
        (entry,) = AuditEntry.objects.filter(pk__gt=last_entry)
        self.assertEqual((entry.action, entry.status_code, entry.object_id, entry.changes), ("apply", 409, "", {}))

    def test_the_count_says_how_many_objects_an_apply_would_change_without_them(self):
        count = self.client.get("/api/v1/revisions/pending/count/")
        self.assertEqual(count.status_code, 200)
        objects = self.client.get("/api/v1/revisions/pending/").data["objects"]
        added = {"added": len(objects), "changed": 0, "removed": 0}
        self.assertEqual(
            count.json(), {"pending": True, "base_revision": None, "count": len(objects), "summary": added}
        )
        self.assertGreaterEqual(len(objects), 2)  # the service and its pool
        self.apply(message="first")
        self.assertEqual(
            self.client.get("/api/v1/revisions/pending/count/").json(),
            {"pending": False, "base_revision": 1, "count": 0, "summary": dict.fromkeys(added, 0)},
        )

    def test_the_changes_come_in_pages_counted_by_kind_of_change(self):
        self.apply(message="first")
        Pool.objects.create(name="b-new", algorithm="round-robin")
        Pool.objects.create(name="c-new", algorithm="round-robin")
        Pool.objects.filter(name="web").update(algorithm="least-connections")
        VirtualService.objects.all().delete()
        whole = self.client.get("/api/v1/revisions/pending/").json()
        paths = [o["path"] for o in whole["objects"]]
        self.assertEqual(whole["count"], len(paths))
        self.assertEqual(whole["summary"], {"added": 2, "changed": 1, "removed": len(paths) - 3})
        pages = [self.client.get("/api/v1/revisions/pending/", {"limit": 2, "offset": n}).json() for n in (0, 2, 4)]
        self.assertEqual([o["path"] for page in pages for o in page["objects"]], paths)
        self.assertEqual(
            {(page["count"], str(page["summary"])) for page in pages}, {(len(paths), str(whole["summary"]))}
        )
        for bad in ({"limit": 0}, {"limit": 1001}, {"offset": -1}, {"limit": "ten"}):
            answer = self.client.get("/api/v1/revisions/pending/", bad)
            self.assertEqual(answer.status_code, 400, bad)
            self.assertEqual(list(answer.json()), list(bad), answer.json())

    def test_force_publishes_the_same_objects_again(self):
        self.apply(message="first")
        response = self.apply(message="push again", force=True)
        self.assertEqual(response.status_code, 201, response.data)
        self.assertEqual((response.data["number"], response.data["message"]), (2, "push again"))
        self.assertNotIn("force", response.data)
        snapshots = [r.snapshot for r in Revision.objects.order_by("number")]
        self.assertEqual([{**s, "revision": 0} for s in snapshots], [{**snapshots[0], "revision": 0}] * 2)
        self.assertEqual(NodeRevision.objects.get(revision__number=2).state, "pending")

    def test_a_change_makes_it_publishable_again_and_undoing_it_does_not(self):
        self.apply()
        s1 = Member.objects.get(name="s1")
        self.assertEqual(self.client.patch(f"/api/v1/members/{s1.pk}/", {"weight": 4}, format="json").status_code, 200)
        self.assertTrue(self.pending())
        self.assertEqual(self.apply(message="s1 weight 4").data["number"], 2)
        self.assertEqual(self.apply().status_code, 409)
        # A change undone before the apply leaves the objects as the last revision has them.
        self.assertEqual(self.client.patch(f"/api/v1/members/{s1.pk}/", {"weight": 1}, format="json").status_code, 200)
        self.assertEqual(self.client.patch(f"/api/v1/members/{s1.pk}/", {"weight": 4}, format="json").status_code, 200)
        self.assertFalse(self.pending())
        self.assertEqual(self.apply().data["base_revision"], 2)

    def test_every_revision_keeps_its_fingerprint_and_one_stored_without_is_compared_by_objects(self):
        self.apply(message="first")
        s1 = Member.objects.get(name="s1")
        live = self.client.post(f"/api/v1/members/{s1.pk}/runtime/", {"weight": 5}, format="json")
        self.assertEqual(live.status_code, 200, live.data)
        first = Revision.objects.get(number=1).pk
        self.assertEqual(self.client.post(f"/api/v1/revisions/{first}/rollback/", {}, format="json").status_code, 201)
        revisions = list(Revision.objects.order_by("number"))
        self.assertEqual(len(revisions), 3)
        self.assertEqual([r.fingerprint for r in revisions], [fingerprint(r.snapshot) for r in revisions])
        self.assertEqual(revisions[0].fingerprint, revisions[2].fingerprint)  # rolled back to the same objects
        self.assertNotEqual(revisions[0].fingerprint, revisions[1].fingerprint)
        # A revision stored before fingerprints were kept (an upgrade): its objects are compared.
        Revision.objects.update(fingerprint="")
        self.assertFalse(self.pending())
        self.assertEqual(self.apply().status_code, 409)
        Pool.objects.create(name="new", algorithm="round-robin")
        self.assertTrue(self.pending())
        self.assertEqual(self.apply().data["number"], 4)

    def test_with_no_objects_and_no_revision_yet_there_is_nothing_to_apply(self):
        VirtualService.objects.all().delete()
        Pool.objects.all().delete()
        Node.objects.all().delete()
        self.assertFalse(self.pending())
        response = self.apply()
        self.assertEqual(response.status_code, 409)
        self.assertEqual(
            (response.data["detail"], response.data["base_revision"]),
            ("nothing to apply: there are no objects and no revision yet", None),
        )
        self.assertEqual(self.apply(force=True).status_code, 201)

    def test_nothing_to_apply_leaves_a_revision_awaiting_confirmation_awaiting(self):
        self.apply(confirm_within_s=60)
        self.assertEqual(self.apply().status_code, 409)
        self.assertEqual(Revision.objects.get().confirm_state, "awaiting")

    def test_force_must_be_true_or_false(self):
        for value in ("yes", 1, None):
            response = self.apply(force=value)
            self.assertEqual((response.status_code, list(response.data)), (400, ["force"]), value)
        self.assertFalse(Revision.objects.exists())


class AgentProtocolTest(APITestCase):
    def setUp(self):
        self.user = get_user_model().objects.create_superuser("ops", password="correct horse battery")
        make_service()
        admin = APIClient()
        admin.force_authenticate(self.user)
        created = admin.post("/api/v1/nodes/", {"name": "lb1"}, format="json")
        self.assertEqual(created.status_code, 201, created.data)
        self.token = created.data["token"]
        self.admin = admin
        self.agent = APIClient()
        self.agent.credentials(HTTP_AUTHORIZATION=f"Node {self.token}")

    def publish(self, **body):
        return self.admin.post("/api/v1/revisions/", body, format="json").data["number"]

    def test_token_is_shown_once(self):
        node = Node.objects.get(name="lb1")
        self.assertNotIn("token", self.admin.get(f"/api/v1/nodes/{node.pk}/").data)
        self.assertNotEqual(node.token_hash, self.token)

    def test_nothing_published_long_poll_times_out(self):
        self.assertEqual(self.agent.get("/api/v1/agent/desired/?known=0&wait=0").status_code, 204)

    def test_new_revision_is_delivered_and_reported(self):
        number = self.publish()
        response = self.agent.get("/api/v1/agent/desired/?known=0&wait=5")
        self.assertEqual(response.status_code, 200)
        self.assertEqual((response.data["revision"], response.data["node"]), (number, "lb1"))
        self.assertIn("backend pool-web", response.data["files"]["haproxy.cfg"])
        self.assertEqual(self.agent.get(f"/api/v1/agent/desired/?known={number}&wait=0").status_code, 204)
        report = {"revision": number, "state": "applied", "message": ""}
        self.assertEqual(self.agent.post("/api/v1/agent/reports/", report, format="json").status_code, 204)
        node = Node.objects.get(name="lb1")
        self.assertEqual(node.applied_revision.number, number)
        self.assertIsNotNone(node.last_seen)
        revision = self.admin.get("/api/v1/revisions/").data["results"][0]
        self.assertEqual(revision["nodes"][0]["state"], "applied")

    def test_failed_report_keeps_previous_applied(self):
        first = self.publish()
        self.agent.post("/api/v1/agent/reports/", {"revision": first, "state": "applied"}, format="json")
        second = self.publish(force=True)
        self.agent.get(f"/api/v1/agent/desired/?known={first}")
        body = {"revision": second, "state": "failed", "message": "reload failed: port in use"}
        self.assertEqual(self.agent.post("/api/v1/agent/reports/", body, format="json").status_code, 204)
        self.assertEqual(Node.objects.get(name="lb1").applied_revision.number, first)
        copy = NodeRevision.objects.get(revision__number=second)
        self.assertEqual((copy.state, copy.message), ("failed", "reload failed: port in use"))

    def test_a_failed_report_names_the_objects_haproxy_named_on_the_node(self):
        number = self.publish()
        copy = NodeRevision.objects.get(revision__number=number)
        line = 1 + copy.files["haproxy.cfg"].split("\n").index("    server s2 10.77.2.12:80 weight 1 check")
        said = f"[/var/lib/fulcrum-agent/sets/r{number}/haproxy.cfg:{line}] : 'server pool-web/s2' : could not resolve"
        message = (
            "haproxy rejected the configuration:\n"
            f"[ALERT]    (4711) : config : {said} address 'web2.internal'.\n"
            "[ALERT]    (4711) : config : Failed to initialize server(s) addr.\n"
            "bind 10.77.100.10:80: bind: address already in use"
        )
        body = {"revision": number, "state": "failed", "message": message}
        self.assertEqual(self.agent.post("/api/v1/agent/reports/", body, format="json").status_code, 204)
        [node] = self.admin.get("/api/v1/revisions/").data["results"][0]["nodes"]
        self.assertEqual(node["message"], message)
        located = {p["path"]: p for p in node["problems"]}
        self.assertEqual(sorted(located), ["pools/web/members/s2/address", "virtual-services/web/vip"])
        server = located["pools/web/members/s2/address"]
        self.assertEqual((server["object"], server["name"], server["id"]), ("pool", "web", Pool.objects.get().pk))
        self.assertEqual((server["daemon"], server["node"]), ("haproxy", "lb1"))
        self.assertEqual(server["daemon_message"], f"ALERT: config : {said} address 'web2.internal'.")
        self.assertEqual(located["virtual-services/web/vip"]["daemon_message"], message.split("\n")[-1])
        # A later success clears them.
        body = {"revision": number, "state": "applied", "message": "applied"}
        self.agent.post("/api/v1/agent/reports/", body, format="json")
        self.assertEqual(NodeRevision.objects.get(revision__number=number).problems, [])

    def test_reading_the_history_the_nodes_and_the_dashboard_reads_no_snapshot_and_no_files(self):
        """At 10,000 services a snapshot, or a node's files, is megabytes and a second or more
        to read back: only what shows or uses one reads it."""
        first = self.publish(confirm_within_s=600)
        self.agent.post("/api/v1/agent/reports/", {"revision": first, "state": "applied"}, format="json")
        pk = Revision.objects.get(number=first).pk

        def read(call, *args, **kwargs):
            with CaptureQueriesContext(connection) as queries:
                answer = call(*args, format="json", **kwargs)
            self.assertLess(answer.status_code, 300, answer.data)
            return answer, [q["sql"] for q in queries if '"snapshot"' in q["sql"] or '"files"' in q["sql"]]

        history, heavy = read(self.admin.get, "/api/v1/revisions/")
        self.assertEqual(history.data["results"][0]["nodes"][0]["running_revision"], first)
        self.assertEqual(heavy, [])
        for path in ("/api/v1/nodes/", "/api/v1/overview/", f"/api/v1/revisions/{pk}/confirm/"):
            call = self.admin.post if path.endswith("confirm/") else self.admin.get
            self.assertEqual(read(call, path)[1], [], path)
        report = {"revision": first, "state": "applied", "message": "again"}
        self.assertEqual(read(self.agent.post, "/api/v1/agent/reports/", report)[1], [])
        self.assertEqual(read(self.admin.get, "/api/v1/overview/")[0].data["revision"]["number"], first)
        # What shows a snapshot reads it, once.
        shown, heavy = read(self.admin.get, f"/api/v1/revisions/{pk}/")
        self.assertEqual((shown.data["snapshot"]["revision"], len(heavy)), (first, 1))

    def test_snapshots_and_files_are_json_documents_read_back_from_json_or_jsonb(self):
        number = self.publish()
        sql = (
            "SELECT pg_typeof(r.snapshot)::text, pg_typeof(n.files)::text FROM revisions_revision r"
            " JOIN revisions_noderevision n ON n.revision_id = r.id WHERE r.number = %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [number])
            self.assertEqual(cursor.fetchone(), ("json", "json"))  # kept as written, not rebuilt as jsonb
        stored = Revision.objects.get(number=number)
        files = NodeRevision.objects.get(revision=stored).files
        self.assertEqual((stored.snapshot["revision"], stored.snapshot["pools"][0]["name"]), (number, "web"))
        self.assertIn("backend pool-web", files["haproxy.cfg"])
        # Columns still jsonb: the new code on a standby before the primary has migrated.
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the deferred triggers fire first
            cursor.execute("ALTER TABLE revisions_revision ALTER COLUMN snapshot TYPE jsonb")
            cursor.execute("ALTER TABLE revisions_noderevision ALTER COLUMN files TYPE jsonb")
        self.assertEqual(Revision.objects.get(number=number).snapshot, stored.snapshot)
        self.assertEqual(NodeRevision.objects.get(revision=stored).files, files)

    def test_node_added_after_publish_gets_a_checked_bundle(self):
        number = self.publish()
        late = self.admin.post("/api/v1/nodes/", {"name": "lb2"}, format="json").data["token"]
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Node {late}")
        response = client.get("/api/v1/agent/desired/?known=0")
        self.assertEqual(response.status_code, 200)
        self.assertIn("for node lb2", response.data["files"]["haproxy.cfg"])
        self.assertTrue(NodeRevision.objects.filter(revision__number=number, node__name="lb2").exists())

    def test_bad_tokens_and_users_are_refused(self):
        self.publish()
        wrong = APIClient()
        wrong.credentials(HTTP_AUTHORIZATION="Node not-a-token")
        self.assertEqual(wrong.get("/api/v1/agent/desired/?known=0").status_code, 401)
        self.assertIn(APIClient().get("/api/v1/agent/desired/?known=0").status_code, (401, 403))
        self.assertIn(self.admin.get("/api/v1/agent/desired/?known=0").status_code, (401, 403))

    def test_bad_reports_are_refused(self):
        number = self.publish()
        for body in ({"revision": number, "state": "pending"}, {"revision": "x", "state": "applied"}, {}):
            self.assertEqual(self.agent.post("/api/v1/agent/reports/", body, format="json").status_code, 400)
        never_sent = {"revision": number + 5, "state": "applied"}
        self.assertEqual(self.agent.post("/api/v1/agent/reports/", never_sent, format="json").status_code, 404)
        self.assertEqual(self.agent.get("/api/v1/agent/desired/?known=abc").status_code, 400)
