"""GET /overview/: each service state, current figures, nodes, pending changes, the newest
revision, and a fixed number of queries."""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient, APITestCase

from accounts.choices import Role
from accounts.tests.people import person
from cluster.models import Node
from revisions.models import NodeRevision, Revision
from services.models import Member, Pool, Rule
from telemetry.overview import service_state
from telemetry.tests.helpers import T0, agent, at, clock, figures, member_entry, post, report, service_with_pool

URL = "/api/v1/overview/"


class ServiceStateTest(APITestCase):
    """The five states, each from the reports that make it."""

    def setUp(self):
        self.viewer = APIClient()
        self.viewer.force_authenticate(person("vera", Role.VIEWER))
        self.lb1, self.agent1 = agent("lb1")
        self.lb2, self.agent2 = agent("lb2")

    def overview(self, now=None):
        with clock(now or at(30)):
            answer = self.viewer.get(URL)
        self.assertEqual(answer.status_code, 200, answer.content)
        return answer.json()

    def service(self, name, now=None):
        return next(s for s in self.overview(now)["services"] if s["name"] == name)

    def state(self, name, now=None):
        row = self.service(name, now)
        return row["state"], row["members_up"], row["members_total"]

    def report_health(self, client, pool, statuses, seconds=20):
        members = [member_entry(pool, name, status) for name, status in statuses.items()]
        self.assertEqual(post(client, report(members=members), at(seconds)).status_code, 204)

    def test_up(self):
        service_with_pool("web")
        self.report_health(self.agent1, "web-pool", {"s1": "up", "s2": "unchecked"})
        self.assertEqual(self.state("web"), ("up", 2, 2))

    def test_degraded_when_a_member_is_not_up(self):
        service_with_pool("web")
        self.report_health(self.agent1, "web-pool", {"s1": "up", "s2": "down"})
        self.assertEqual(self.state("web"), ("degraded", 1, 2))

    def test_degraded_when_one_node_sees_a_member_down(self):
        service_with_pool("web")
        self.report_health(self.agent1, "web-pool", {"s1": "up", "s2": "up"})
        self.report_health(self.agent2, "web-pool", {"s1": "up", "s2": "down"})
        self.assertEqual(self.state("web"), ("degraded", 2, 2))

    def test_a_member_without_a_fresh_report_is_not_up(self):
        service_with_pool("web")
        self.report_health(self.agent1, "web-pool", {"s1": "up"})
        self.report_health(self.agent1, "web-pool", {"s2": "up"}, seconds=-61)
        self.assertEqual(self.state("web"), ("degraded", 1, 2))

    def test_drained_or_disabled_members_do_not_degrade(self):
        service_with_pool("web", members=("s1", "s2", "s3"))
        Member.objects.filter(name="s2").update(state="drain")
        Member.objects.filter(name="s3").update(state="disabled")
        self.report_health(self.agent1, "web-pool", {"s1": "up", "s2": "drain", "s3": "maint"})
        self.assertEqual(self.state("web"), ("up", 1, 1))

    def test_down_when_no_member_is_up(self):
        service_with_pool("web")
        self.report_health(self.agent1, "web-pool", {"s1": "down", "s2": "maint"})
        self.assertEqual(self.state("web"), ("down", 0, 2))
        service_with_pool("empty", members=("e1",), subnet=2)
        Member.objects.filter(name="e1").update(state="drain")
        self.assertEqual(self.state("empty"), ("down", 0, 0))  # nothing left to serve

    def test_disabled(self):
        service_with_pool("web", enabled=False)
        self.report_health(self.agent1, "web-pool", {"s1": "up", "s2": "up"})
        self.assertEqual(self.state("web"), ("disabled", 2, 2))

    def test_unknown_without_fresh_health(self):
        service_with_pool("web")
        self.assertEqual(self.state("web"), ("unknown", 0, 2))
        self.report_health(self.agent1, "web-pool", {"s1": "up", "s2": "up"}, seconds=0)
        self.assertEqual(self.state("web", now=at(60)), ("up", 2, 2))
        self.assertEqual(self.state("web", now=at(61)), ("unknown", 0, 2))  # the node went quiet

    def test_rule_pools_count_and_disabled_rules_do_not(self):
        web = service_with_pool("web", members=("s1",))
        extra = Pool.objects.create(name="extra")
        Member.objects.create(pool=extra, name="x1", address="10.9.0.1", port=80)
        Rule.objects.create(virtual_service=web, position=0, name="r", action="use_pool", pool=extra, conditions=[])
        self.report_health(self.agent1, "web-pool", {"s1": "up"})
        self.report_health(self.agent1, "extra", {"x1": "down"})
        self.assertEqual(self.state("web"), ("degraded", 1, 2))
        Rule.objects.update(enabled=False)
        self.assertEqual(self.state("web"), ("up", 1, 1))

    def test_the_rules_of_the_states(self):
        self.assertEqual(service_state(False, [["up"]]), ("disabled", 1))
        self.assertEqual(service_state(True, []), ("down", 0))
        self.assertEqual(service_state(True, [[], []]), ("unknown", 0))
        self.assertEqual(service_state(True, [["down"], []]), ("down", 0))
        self.assertEqual(service_state(True, [["up", "down"], ["up"]]), ("degraded", 2))
        self.assertEqual(service_state(True, [["up"], []]), ("degraded", 1))
        self.assertEqual(service_state(True, [["up", "up"], ["unchecked"]]), ("up", 2))


class OverviewTest(APITestCase):
    def setUp(self):
        self.admin = APIClient()
        self.admin.force_authenticate(
            get_user_model().objects.create_superuser("root", password="correct horse battery")
        )
        self.viewer = APIClient()
        self.viewer.force_authenticate(person("vera", Role.VIEWER))

    def overview(self, now=None):
        with clock(now or at(30)):
            answer = self.viewer.get(URL)
        self.assertEqual(answer.status_code, 200, answer.content)
        return answer.json()

    def test_a_service_row(self):
        web = service_with_pool("web", protocol="tcp", forwarding="nat", port_end=90)
        lb1, agent1 = agent("lb1")
        _, agent2 = agent("lb2")
        entry = {"service": "web", **figures(4, 600, 6, 1200, 6000)}
        post(agent1, report([entry]), at(-40))  # older than the last minute: not counted
        post(agent1, report([{**entry, "connections": 5}]), at(0))
        post(agent1, report([{**entry, "connections": 6}]), at(10))
        post(agent2, report([{**entry, "connections": 1}], interval_s=20), at(20))
        row = self.overview()["services"][0]
        self.assertEqual(
            row,
            {
                "id": web.pk,
                "name": "web",
                "vip": "10.200.1.1",
                "port": 80,
                "port_end": 90,
                "protocol": "tcp",
                "forwarding": "nat",
                "layer": "l4",
                "enabled": True,
                "state": "unknown",
                "members_up": 0,
                "members_total": 2,
                # lb1: 1200 requests over 20 s, latest gauge 6; lb2: 600 over 20 s, gauge 1.
                "connections": 7,
                "requests_per_s": 90.0,
                "errors_per_s": 0.9,
                "bytes_in_per_s": 180.0,
                "bytes_out_per_s": 900.0,
            },
        )
        self.assertEqual(self.overview(now=at(200))["services"][0]["requests_per_s"], 0.0)
        self.assertEqual(lb1.pk, self.overview()["nodes"][0]["id"])

    def test_proxied_services_are_layer_7(self):
        service_with_pool("web")
        self.assertEqual(self.overview()["services"][0]["layer"], "l7")

    def test_nodes(self):
        service_with_pool("web")
        with clock(T0):
            applied = self.admin.post("/api/v1/revisions/", {"message": "first"}, format="json")
        self.assertEqual(applied.status_code, 201, applied.content)
        lb1, agent1 = agent("lb1")
        lb2, _ = agent("lb2")
        Node.objects.create(name="lb3", token_hash="x" * 64)
        post(agent1, report(), at(0))  # the agent calls: last seen
        Node.objects.filter(pk=lb2.pk).update(last_seen=at(-91), standby=True)
        Node.objects.filter(pk=lb1.pk).update(
            applied_revision=Revision.objects.get(number=1),
            vrrp_status=[{"group": "ha1", "state": "master", "priority": 150, "since": None}],
        )
        nodes = {n["name"]: n for n in self.overview()["nodes"]}
        self.assertEqual(
            nodes["lb1"],
            {
                "id": lb1.pk,
                "name": "lb1",
                "state": "online",
                "running_revision": 1,
                "last_seen": "2026-03-01T12:00:00Z",
                "ha": [{"group": "ha1", "state": "master"}],
            },
        )
        self.assertEqual((nodes["lb2"]["state"], nodes["lb2"]["running_revision"]), ("offline", None))
        self.assertEqual((nodes["lb3"]["state"], nodes["lb3"]["last_seen"]), ("never-seen", None))
        Node.objects.filter(pk=lb2.pk).update(last_seen=at(0))
        self.assertEqual({n["name"]: n["state"] for n in self.overview()["nodes"]}["lb2"], "standby")

    def test_pending_changes_and_the_newest_revision(self):
        body = self.overview()
        self.assertEqual((body["pending_changes"], body["revision"]), (0, None))
        service_with_pool("web")
        self.assertEqual(self.overview()["pending_changes"], 2)  # the service and its pool
        lb1, _ = agent("lb1")  # nodes are objects of a revision too
        self.assertEqual(len(self.admin.get("/api/v1/revisions/pending/").json()["objects"]), 3)
        self.assertEqual(self.overview()["pending_changes"], 3)
        applied = self.admin.post("/api/v1/revisions/", {"confirm_within_s": 60}, format="json")
        self.assertEqual(applied.status_code, 201, applied.content)
        body = self.overview(now=timezone.now())
        self.assertEqual(body["pending_changes"], 0)
        revision = Revision.objects.get()
        self.assertEqual(
            body["revision"],
            {
                "number": 1,
                "live": False,
                "confirm_state": "awaiting",
                "confirm_by": revision.confirm_by.isoformat().replace("+00:00", "Z"),
            },
        )
        NodeRevision.objects.filter(node=lb1).update(state="applied")
        self.assertEqual(self.overview(now=timezone.now())["revision"]["live"], True)
        Pool.objects.filter(name="web-pool").update(algorithm="least-connections")
        self.assertEqual(self.overview(now=timezone.now())["pending_changes"], 1)

    def test_a_passed_confirmation_deadline_rolls_back_first(self):
        service_with_pool("web")
        agent("lb1")
        applied = self.admin.post("/api/v1/revisions/", {"confirm_within_s": 60}, format="json")
        self.assertEqual(applied.status_code, 201, applied.content)
        body = self.overview(now=timezone.now() + timedelta(seconds=61))
        self.assertEqual((body["revision"]["number"], body["revision"]["confirm_state"]), (2, "none"))
        self.assertEqual(Revision.objects.get(number=1).confirm_state, "rolled-back")

    def test_queries_do_not_grow_with_services_nodes_and_reports(self):
        def grow(start, count):
            for i in range(start, start + count):
                service = service_with_pool(f"svc{i}", subnet=i)
                Rule.objects.create(
                    virtual_service=service,
                    position=0,
                    name="r",
                    action="use_pool",
                    pool=service.default_pool,
                    conditions=[],
                )
                _, client = agent(f"lb{i}")
                entry = {"service": f"svc{i}", **figures(1, 10)}
                post(client, report([entry], [member_entry(f"svc{i}-pool", "s1")]), at(10))

        def cost():
            with clock(at(30)), CaptureQueriesContext(connection) as captured:
                self.assertEqual(self.viewer.get(URL).status_code, 200)
            return len(captured)

        grow(1, 1)
        cost()  # the first request also reads the viewer's role
        few = cost()
        grow(2, 12)
        self.assertEqual(cost(), few)
        self.assertEqual(len(self.overview()["services"]), 13)

    def test_people_must_sign_in(self):
        self.assertIn(APIClient().get(URL).status_code, (401, 403))
