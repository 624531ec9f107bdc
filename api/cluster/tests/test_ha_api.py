"""High availability through the API on PostgreSQL: HA groups with per-node priorities,
node addresses, what each node's revision carries, the standby handover, role events
and VRRP states from the agents, and a revision's "live" flag."""

import json
from unittest import mock

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient, APITestCase

from cluster.models import DaemonEvent, HaEvent, HaGroup, HaGroupNode, IpvsSync, Node
from fulcrum.testing import APIViewTests
from revisions.models import NodeRevision, Revision
from services.models import Member, Pool, VirtualService


def _node(name, address):
    node = Node(name=name, address=address)
    token = node.rotate_token()
    node.save()
    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Node {token}")
    return node, agent


class HaGroupApiTest(APIViewTests, APITestCase):
    url = "/api/v1/ha-groups/"
    model = HaGroup

    def setUp(self):
        super().setUp()
        self.lb1, _ = _node("lb1", "10.0.1.3")
        self.lb2, _ = _node("lb2", "10.0.1.4")
        self.lone = Node.objects.create(name="lb3")  # no address
        pair = [
            {"node": self.lb1.pk, "priority": 150, "interface": ""},
            {"node": self.lb2.pk, "priority": 100, "interface": "ens3"},
        ]
        mirrored = [
            {"node": self.lb1.pk, "priority": 100, "interface": ""},
            {"node": self.lb2.pk, "priority": 150, "interface": ""},
        ]
        self.create_data = [
            {"name": "front-a", "vrid": 51, "vips": ["10.0.0.10", "10.0.0.11/24"], "advert_interval_ms": 200},
            {"name": "front-b", "vrid": 52, "vips": ["10.0.0.20"], "vrrp_version": 2, "preempt": False},
            {"name": "v6", "vrid": 53, "vips": ["2001:db8::10"], "interface": "eth1"},
        ]
        for body, nodes in zip(
            self.create_data, (pair, mirrored, [{"node": self.lb1.pk, "priority": 9, "interface": ""}]), strict=True
        ):
            body["nodes"] = nodes
        base = {"name": "bad", "vrid": 60, "vips": ["10.0.0.60"], "nodes": pair}
        self.bad_data = [
            ({**base, "vrid": 0}, "vrid"),
            ({**base, "vrid": 256}, "vrid"),
            ({**base, "vrid": 9}, "vrid"),  # already the existing group's
            ({**base, "vips": []}, "vips"),
            ({**base, "vips": ["10.0.0.1", "2001:db8::1"]}, "vips"),
            ({**base, "vips": ["not-an-ip"]}, "vips"),
            ({**base, "vips": ["10.0.0.9"]}, "vips"),  # the existing group's VIP
            ({**base, "advert_interval_ms": 205}, "advert_interval_ms"),
            ({**base, "vrrp_version": 2, "advert_interval_ms": 200}, "advert_interval_ms"),
            ({**base, "auth_password": "secret"}, "auth_password"),  # VRRPv3
            ({**base, "vrrp_version": 2, "auth_password": "has space"}, "auth_password"),
            ({**base, "interface": "eth0\nvrrp_script evil {"}, "interface"),
            ({**base, "track_interfaces": ["eth1 }"]}, "track_interfaces"),
            ({**base, "witness": "gateway"}, "witness"),
            ({**base, "name": "bad\nname"}, "name"),
            (
                {**base, "nodes": [{"node": self.lb1.pk, "priority": 150}, {"node": self.lb2.pk, "priority": 150}]},
                "nodes",
            ),
            ({**base, "nodes": [{"node": self.lb1.pk, "priority": 255}]}, "nodes"),
            ({**base, "nodes": [{"node": 9999, "priority": 100}]}, "nodes"),
            ({**base, "nodes": [{"node": self.lb1.pk, "priority": 100, "interface": "x y"}]}, "nodes"),
            ({**base, "nodes": pair + [{"node": self.lone.pk, "priority": 50}]}, "non_field_errors"),  # no address
            ({**base, "preempt": False, "preempt_delay_s": 5}, "preempt_delay_s"),
        ]
        self.update_data = {"advert_interval_ms": 100, "preempt": False, "witness": "10.0.1.1"}

    def test_the_management_vips_vrid_and_address_are_the_clusters_own(self):
        base = {**self.create_data[0], "name": "mgmt-clash"}
        with self.settings(FULCRUM_MGMT_VIP="10.0.0.250", FULCRUM_MGMT_VRID=250):
            for body, field, words in (
                ({**base, "vrid": 250}, "vrid", "management VIP's"),
                ({**base, "vrid": 70, "vips": ["10.0.0.250/24"]}, "vips", "only it may hold"),
            ):
                answer = self.client.post(self.url, body, format="json")
                self.assertEqual(answer.status_code, 400, answer.content)
                self.assertIn(words, str(answer.json()[field]))
        self.assertFalse(HaGroup.objects.filter(name="mgmt-clash").exists())
        # Without a management VIP the VRID is free.
        answer = self.client.post(self.url, {**base, "vrid": 250}, format="json")
        self.assertEqual(answer.status_code, 201, answer.content)

    def create_objects(self):
        group = HaGroup.objects.create(name="existing", vrid=9, vips=["10.0.0.9"])
        HaGroupNode.objects.create(group=group, node=self.lb1, priority=100)
        return group

    def test_a_clash_is_reported_on_the_group_being_saved_only(self):
        self.create_objects()
        body = {**self.create_data[0], "vips": ["10.0.0.9"]}
        response = self.client.post(self.url, body, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.data["vips"], ["0: 10.0.0.9 is also in HA group existing"])
        self.assertNotIn("non_field_errors", response.data)

    def test_the_password_is_never_shown(self):
        response = self.client.post(self.url, {**self.create_data[1], "auth_password": "pw"}, format="json")
        self.assertEqual(response.status_code, 201, response.data)
        self.assertNotIn("auth_password", response.data)
        self.assertTrue(response.data["authentication"])
        self.assertNotIn("pw", json.dumps(self.client.get(self.url).data))

    def test_nodes_are_replaced_as_a_whole(self):
        group = self.create_objects()
        body = {"nodes": [{"node": self.lb2.pk, "priority": 200, "interface": "ens3"}]}
        response = self.client.patch(self.detail(group), body, format="json")
        self.assertEqual(response.status_code, 200, response.data)
        self.assertEqual(response.data["nodes"], body["nodes"])
        self.assertEqual(list(group.nodes.values_list("node__name", "priority")), [("lb2", 200)])

    def test_a_node_address_the_group_needs_cannot_be_removed(self):
        self.client.post(self.url, self.create_data[0], format="json")
        response = self.client.patch(f"/api/v1/nodes/{self.lb2.pk}/", {"address": None}, format="json")
        self.assertEqual(response.status_code, 400, response.data)
        self.lb2.refresh_from_db()
        self.assertEqual(self.lb2.address, "10.0.1.4")
        response = self.client.patch(f"/api/v1/nodes/{self.lb2.pk}/", {"address": "not an address"}, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertIn("address", response.data)


class HaRevisionTest(APITestCase):
    """What an apply sends each node, the standby handover, and what the agents report."""

    def setUp(self):
        self.client.force_authenticate(get_user_model().objects.create_superuser("ops", password="x" * 12))
        self.lb1, self.agent1 = _node("lb1", "10.0.1.3")
        self.lb2, self.agent2 = _node("lb2", "10.0.1.4")
        web = Pool.objects.create(name="web", persistence={"type": "source"})
        Member.objects.create(pool=web, name="s1", address="10.0.2.11", port=80)
        VirtualService.objects.create(name="www", vip="10.0.0.10", port=80, default_pool=web)
        nodes = [{"node": self.lb1.pk, "priority": 150}, {"node": self.lb2.pk, "priority": 100}]
        body = {"name": "front", "vrid": 51, "vips": ["10.0.0.10"], "advert_interval_ms": 200, "nodes": nodes}
        response = self.client.post("/api/v1/ha-groups/", body, format="json")
        self.assertEqual(response.status_code, 201, response.data)
        self.group = HaGroup.objects.get()

    def _apply(self):
        response = self.client.post("/api/v1/revisions/", {}, format="json")
        self.assertEqual(response.status_code, 201, response.data)
        return response.data["number"]

    def _files(self, node, number):
        return NodeRevision.objects.get(node=node, revision__number=number).files

    def test_each_node_gets_its_own_priority_and_its_peer(self):
        number = self._apply()
        one, two = self._files(self.lb1, number), self._files(self.lb2, number)
        self.assertIn("priority 150", one["keepalived.conf"])
        self.assertIn("priority 100", two["keepalived.conf"])
        self.assertIn("unicast_src_ip 10.0.1.3", one["keepalived.conf"])
        self.assertIn("unicast_src_ip 10.0.1.4", two["keepalived.conf"])
        self.assertIn("advert_int 0.2", one["keepalived.conf"])
        self.assertIn("localpeer lb2", two["haproxy.cfg"])
        self.assertIn("peers fulcrum", two["haproxy.cfg"])
        self.assertIn("bind 10.0.0.10:80 transparent", one["haproxy.cfg"])
        self.assertEqual(json.loads(two["keepalived.d/ha.json"])["groups"][0]["peers"], ["10.0.1.3"])

    def test_ipvs_sync_follows_the_group_master(self):
        response = self.client.patch(
            "/api/v1/ipvs-sync/", {"enabled": True, "interface": "eth0", "ha_group": self.group.pk}, format="json"
        )
        self.assertEqual(response.status_code, 200, response.data)
        number = self._apply()
        self.assertIn("lvs_sync_daemon eth0 front id 0", self._files(self.lb1, number)["keepalived.conf"])
        # Renamed, the group is still the one the sync daemons follow.
        response = self.client.patch(f"/api/v1/ha-groups/{self.group.pk}/", {"name": "front-2"}, format="json")
        self.assertEqual(response.status_code, 200, response.data)
        self.assertIn("lvs_sync_daemon eth0 front-2 id 0", self._files(self.lb1, self._apply())["keepalived.conf"])
        # A group in use by the sync settings cannot be deleted from under them.
        self.assertEqual(self.client.delete(f"/api/v1/ha-groups/{self.group.pk}/").status_code, 409)
        self.assertTrue(HaGroup.objects.exists())
        self.assertEqual(IpvsSync.load().ha_group, self.group)

    def test_standby_hands_over_without_applying_pending_edits(self):
        first = self._apply()
        Pool.objects.create(name="pending")  # an edit not applied yet
        response = self.client.post(f"/api/v1/nodes/{self.lb1.pk}/standby/", {"standby": True}, format="json")
        self.assertEqual(response.status_code, 200, response.data)
        self.assertTrue(response.data["node"]["standby"])
        number = response.data["revision"]
        self.assertEqual(number, first + 1)
        self.assertTrue(json.loads(self._files(self.lb1, number)["keepalived.d/ha.json"])["standby"])
        self.assertFalse(json.loads(self._files(self.lb2, number)["keepalived.d/ha.json"])["standby"])
        self.assertNotIn("pending", json.dumps(Revision.objects.get(number=number).snapshot["pools"]))
        # The next full apply keeps the node in standby until an operator takes it back.
        self.assertTrue(json.loads(self._files(self.lb1, self._apply())["keepalived.d/ha.json"])["standby"])
        response = self.client.post(f"/api/v1/nodes/{self.lb1.pk}/standby/", {"standby": False}, format="json")
        self.assertFalse(
            json.loads(self._files(self.lb1, response.data["revision"])["keepalived.d/ha.json"])["standby"]
        )

    def test_standby_before_any_apply_is_refused(self):
        response = self.client.post(f"/api/v1/nodes/{self.lb1.pk}/standby/", {"standby": True}, format="json")
        self.assertEqual(response.status_code, 409, response.data)
        self.lb1.refresh_from_db()
        self.assertFalse(self.lb1.standby)
        for bad in ({}, {"standby": "maybe"}, {"standby": True, "force": 1}):
            self.assertEqual(
                self.client.post(f"/api/v1/nodes/{self.lb1.pk}/standby/", bad, format="json").status_code, 400
            )

    def test_role_events_and_states_from_the_agents(self):
        event = {
            "at": "2026-11-22T10:00:00.250Z",
            "group": "front",
            "old_state": "backup",
            "new_state": "master",
            "priority": 100,
            "reason": "no advert from the master for 3 intervals",
        }
        self.assertEqual(self.agent2.post("/api/v1/agent/events/", {"events": [event]}, format="json").status_code, 204)
        status = {
            "networks": [],
            "vrrp": [{"group": "front", "state": "master", "priority": 100, "since": event["at"]}],
        }
        self.assertEqual(self.agent2.post("/api/v1/agent/status/", status, format="json").status_code, 204)
        listed = self.client.get("/api/v1/ha-events/?node=lb2").data["results"]
        self.assertEqual([(e["node"], e["old_state"], e["new_state"]) for e in listed], [("lb2", "backup", "master")])
        self.assertEqual(self.client.get("/api/v1/ha-events/?node=lb1").data["count"], 0)
        self.assertEqual(self.client.get(f"/api/v1/ha-events/?after={listed[0]['id']}").data["count"], 0)
        self.assertEqual(self.client.get(f"/api/v1/ha-events/?after={listed[0]['id'] - 1}").data["count"], 1)
        self.assertEqual(self.client.get("/api/v1/ha-events/?after=x").status_code, 400)
        node = self.client.get(f"/api/v1/nodes/{self.lb2.pk}/").data
        self.assertEqual(node["vrrp"][0]["state"], "master")
        for bad in ({"new_state": "boss"}, {"at": "yesterday"}, {"reason": "x" * 501}, {"new_state": 1}):
            body = {"events": [{**event, **bad}]}
            self.assertEqual(self.agent2.post("/api/v1/agent/events/", body, format="json").status_code, 400, bad)
        self.assertEqual(
            self.agent2.post("/api/v1/agent/events/", {"events": [event] * 101}, format="json").status_code, 400
        )
        self.assertEqual(HaEvent.objects.count(), 1)
        # Only agents report; an operator's session cannot.
        self.assertIn(
            self.client.post("/api/v1/agent/events/", {"events": [event]}, format="json").status_code, (401, 403)
        )

    def test_agents_report_daemon_restarts_and_operators_list_them(self):
        restarted = {
            "at": "2026-11-29T12:00:00Z",
            "daemon": "haproxy",
            "outcome": "restarted",
            "detail": "it had stopped; started it again from the live configuration (revision 3)",
        }
        failed = {**restarted, "at": "2026-11-29T12:00:01Z", "daemon": "keepalived", "outcome": "restart-failed",
                  "detail": "keepalived: cannot open /run/keepalived.pid"}  # fmt: skip
        answer = self.agent2.post("/api/v1/agent/daemon-events/", {"events": [restarted, failed]}, format="json")
        self.assertEqual(answer.status_code, 204, answer.data)
        listed = self.client.get("/api/v1/daemon-events/?node=lb2").data["results"]
        self.assertEqual(
            [(e["node"], e["daemon"], e["outcome"], e["detail"]) for e in listed],
            [("lb2", "keepalived", "restart-failed", failed["detail"]), ("lb2", "haproxy", "restarted", restarted["detail"])],
        )  # fmt: skip
        self.assertEqual(self.client.get("/api/v1/daemon-events/?node=lb1").data["count"], 0)
        self.assertEqual(self.client.get("/api/v1/daemon-events/?daemon=haproxy").data["count"], 1)
        for bad in ({"daemon": "nginx"}, {"outcome": "fine"}, {"at": "now"}, {"detail": "x" * 501}):
            body = {"events": [{**restarted, **bad}]}
            self.assertEqual(
                self.agent2.post("/api/v1/agent/daemon-events/", body, format="json").status_code, 400, bad
            )
        too_many = {"events": [restarted] * 101}
        self.assertEqual(self.agent2.post("/api/v1/agent/daemon-events/", too_many, format="json").status_code, 400)
        self.assertEqual(DaemonEvent.objects.count(), 2)
        # Only agents report; an operator's session cannot.
        answer = self.client.post("/api/v1/agent/daemon-events/", {"events": [restarted]}, format="json")
        self.assertIn(answer.status_code, (401, 403))
        # A node keeps its newest KEPT_PER_NODE events.
        with mock.patch.object(DaemonEvent, "KEPT_PER_NODE", 3):
            for second in range(10, 15):
                event = {**restarted, "at": f"2026-11-29T12:00:{second}Z"}
                self.agent2.post("/api/v1/agent/daemon-events/", {"events": [event]}, format="json")
        kept = [e["at"] for e in self.client.get("/api/v1/daemon-events/?node=lb2").data["results"]]
        self.assertEqual(kept, [f"2026-11-29T12:00:{s}Z" for s in (14, 13, 12)])

    def test_each_appliances_part_in_the_management_vip(self):
        for agent, state in ((self.agent1, "master"), (self.agent2, "backup")):
            answer = agent.post("/api/v1/agent/status/", {"networks": [], "management": state}, format="json")
            self.assertEqual(answer.status_code, 204, answer.data)
        nodes = {n["name"]: n["management"] for n in self.client.get("/api/v1/nodes/").data["results"]}
        self.assertEqual((nodes["lb1"], nodes["lb2"]), ("master", "backup"))
        # An agent without a management VIP says nothing about it: none.
        self.assertEqual(self.agent2.post("/api/v1/agent/status/", {"networks": []}, format="json").status_code, 204)
        self.assertEqual(self.client.get(f"/api/v1/nodes/{self.lb2.pk}/").data["management"], "")
        bad = self.agent2.post("/api/v1/agent/status/", {"networks": [], "management": "MASTER; x"}, format="json")
        self.assertEqual(bad.status_code, 400)
        self.assertEqual(self.client.get(f"/api/v1/nodes/{self.lb2.pk}/").data["management"], "")

    def test_a_newer_agents_report_is_taken_without_the_fields_this_api_does_not_know(self):
        """A rolling upgrade: the upgraded standby's agent reports to the older primary's API."""
        status = {
            "networks": ["10.0.0.2/24"], "management": "backup", "added_later": {"x": 1},
            "vrrp": [{"group": "front", "state": "backup", "priority": 100, "added_later": True}],
        }  # fmt: skip
        answer = self.agent2.post("/api/v1/agent/status/", status, format="json")
        self.assertEqual(answer.status_code, 204, answer.data)
        node = self.client.get(f"/api/v1/nodes/{self.lb2.pk}/").data
        self.assertEqual(node["management"], "backup")
        self.assertEqual([(v["group"], v["state"]) for v in node["vrrp"]], [("front", "backup")])
        self.assertNotIn("added_later", str(node))
        # The fields it knows are still checked, and a refused report changes nothing.
        bad = self.agent2.post("/api/v1/agent/status/", {**status, "management": 5}, format="json")
        self.assertEqual(bad.status_code, 400)
        self.assertIn("management", bad.data)
        self.assertEqual(self.client.get(f"/api/v1/nodes/{self.lb2.pk}/").data["management"], "backup")

    def test_a_revision_is_live_when_every_node_applied_it(self):
        number = self._apply()
        for agent in (self.agent1, self.agent2):
            revision = self.client.get("/api/v1/revisions/").data["results"][0]
            self.assertFalse(revision["live"])
            report = {"revision": number, "state": "applied", "message": ""}
            self.assertEqual(agent.post("/api/v1/agent/reports/", report, format="json").status_code, 204)
        self.assertTrue(self.client.get("/api/v1/revisions/").data["results"][0]["live"])

    def test_a_vip_outside_every_group_is_flagged(self):
        pool = Pool.objects.get(name="web")
        VirtualService.objects.create(name="stuck", vip="10.0.0.99", port=80, default_pool=pool)
        warnings = {s["name"]: s["warnings"] for s in self.client.get("/api/v1/virtual-services/").data["results"]}
        self.assertEqual(warnings["www"], [])
        self.assertIn("VIP 10.0.0.99 is in no HA group", warnings["stuck"][0])

    def test_a_vip_on_no_network_of_a_node_is_flagged(self):
        def warnings():
            return self.client.get("/api/v1/virtual-services/").data["results"][0]["warnings"]

        self.assertEqual(warnings(), [])  # no node reported its networks yet: nothing to judge
        for agent, networks in ((self.agent1, ["10.0.0.3/24"]), (self.agent2, ["10.0.1.4/24", "fd00::4/64"])):
            self.assertEqual(
                agent.post("/api/v1/agent/status/", {"networks": networks}, format="json").status_code, 204
            )
        self.assertEqual(len(warnings()), 1)
        self.assertIn(
            "VIP 10.0.0.10 is on no network of node lb2: clients reach it there only if a router", warnings()[0]
        )
        # lb2 holds it as an address (a /32 is a network of its own): on it.
        body = {"networks": ["10.0.1.4/24", "10.0.0.10/32"]}
        self.assertEqual(self.agent2.post("/api/v1/agent/status/", body, format="json").status_code, 204)
        self.assertEqual(warnings(), [])
        VirtualService.objects.update(vip="0.0.0.0")  # every address of the node
        self.assertEqual([w.split(":")[0] for w in warnings()], ["VIP 0.0.0.0 is in no HA group"])


class StandbyRetryTest(APITestCase):
    """A standby publish that collides with the node's own status report is retried."""

    def test_a_serialization_failure_is_retried_once_then_succeeds(self):
        from unittest import mock

        import psycopg
        from django.db import OperationalError

        from revisions import publish

        node, _ = _node("lb1", "10.0.1.3")
        calls = []

        def collide_once(*args):
            calls.append(args)
            if len(calls) == 1:
                try:
                    raise psycopg.errors.SerializationFailure("could not serialize access due to concurrent update")
                except psycopg.errors.SerializationFailure as cause:
                    raise OperationalError(str(cause)) from cause
            return "revision"

        with mock.patch.object(publish, "_publish_node_standby", side_effect=collide_once):
            self.assertEqual(publish.publish_node_standby(node, True, None), "revision")
        self.assertEqual(len(calls), 2)
