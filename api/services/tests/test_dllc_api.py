"""Dynamic least load (DLLC) through the API on PostgreSQL: the algorithm on layer-7 and
layer-4 pools, what a revision carries for the node agent and HAProxy, and the members'
live loads and connections as the agents report them."""

import json

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient, APITestCase

from cluster.models import Node
from revisions.models import NodeRevision
from services.models import HealthCheck, Member, Pool, VirtualService


class DllcTest(APITestCase):
    def setUp(self):
        self.client.force_authenticate(get_user_model().objects.create_superuser("ops", password="x" * 12))
        self.node = Node.objects.create(name="lb1")
        token = self.node.rotate_token()
        self.node.save()
        self.agent = APIClient()
        self.agent.credentials(HTTP_AUTHORIZATION=f"Node {token}")
        self.web = Pool.objects.create(name="web", algorithm="dynamic-least-load", feedback_interval_ms=500)
        Member.objects.create(pool=self.web, name="s1", address="10.0.2.1", port=8080, weight=2)
        Member.objects.create(pool=self.web, name="s2", address="10.0.2.2", port=8080, weight=1)
        VirtualService.objects.create(name="www", vip="10.0.0.9", port=80, default_pool=self.web)

    def test_a_layer7_pool_balances_by_agent_weights(self):
        self.assertEqual(self.client.post("/api/v1/revisions/", {}, format="json").status_code, 201)
        files = NodeRevision.objects.get(node=self.node).files
        self.assertIn("balance leastconn", files["haproxy.cfg"])
        self.assertIn(
            "server s2 10.0.2.2:8080 weight 128 agent-check agent-port 3333 agent-inter 500ms", files["haproxy.cfg"]
        )
        servers = json.loads(files["haproxy.d/servers.json"])["servers"]
        self.assertEqual(servers[0]["feedback"], {"pool": "web", "member": "s1", "address": "10.0.2.1", "port": 3334})

    def test_an_agent_health_check_is_refused_on_a_dllc_pool(self):
        response = self.client.post(
            "/api/v1/health-checks/",
            {"pool": self.web.pk, "type": "agent", "agent_port": 3333, "interval_ms": 1000, "timeout_ms": 500},
            format="json",
        )
        self.assertEqual(response.status_code, 400, response.data)
        self.assertIn("one agent per server", json.dumps(response.data))
        self.assertFalse(HealthCheck.objects.exists())

    def test_bad_feedback_settings_are_refused_and_change_nothing(self):
        for field, value in (("feedback_agent_port", 0), ("feedback_http_port", 65536), ("feedback_interval_ms", 5)):
            response = self.client.patch(f"/api/v1/pools/{self.web.pk}/", {field: value}, format="json")
            self.assertEqual(response.status_code, 400, (field, response.data))
            self.assertIn(field, response.data)
        self.web.refresh_from_db()
        self.assertEqual((self.web.feedback_agent_port, self.web.feedback_http_port), (3333, 3334))

    def test_members_show_their_live_load_and_connections(self):
        status = {
            "networks": ["10.0.2.254/24"],
            "members": [
                {
                    "pool": "web",
                    "member": "s1",
                    "layer": "haproxy",
                    "load_milli": 300,
                    "load_at": "2026-11-22T08:00:00Z",
                    "connections": 8,
                    "weight": 84,
                    "feed": "haproxy agent-check",
                    "message": "",
                },
                {
                    "pool": "web",
                    "member": "s2",
                    "layer": "haproxy",
                    "load_milli": None,
                    "load_at": None,
                    "connections": 0,
                    "weight": 128,
                    "feed": "haproxy agent-check",
                    "message": "no fresh load: fulcrum-loadd has not answered yet",
                },
            ],
        }
        self.assertEqual(self.agent.post("/api/v1/agent/status/", status, format="json").status_code, 204)
        members = {m["name"]: m for m in self.client.get(f"/api/v1/pools/{self.web.pk}/").data["members"]}
        live = members["s1"]["live"]
        self.assertEqual(len(live), 1)
        self.assertEqual(
            {k: live[0][k] for k in ("node", "load_milli", "connections", "weight", "feed")},
            {"node": "lb1", "load_milli": 300, "connections": 8, "weight": 84, "feed": "haproxy agent-check"},
        )
        self.assertIn("has not answered", members["s2"]["live"][0]["message"])
        listed = self.client.get("/api/v1/members/").data["results"]
        self.assertEqual({m["name"]: m["live"][0]["connections"] for m in listed}, {"s1": 8, "s2": 0})

    def test_a_bad_member_status_is_refused_and_changes_nothing(self):
        good = {
            "pool": "web",
            "member": "s1",
            "layer": "haproxy",
            "load_milli": 1,
            "load_at": None,
            "connections": 0,
            "weight": 1,
            "feed": "",
            "message": "",
        }
        for bad in (
            {"layer": "dns"},
            {"load_milli": -1},
            {"connections": "many"},
            {"weight": "1"},
            {"member": "x" * 64},
        ):
            body = {"networks": [], "members": [{**good, **bad}]}
            self.assertEqual(self.agent.post("/api/v1/agent/status/", body, format="json").status_code, 400, bad)
        self.node.refresh_from_db()
        self.assertEqual(self.node.member_status, [])
