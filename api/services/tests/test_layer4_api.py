"""Layer 4 (IPVS through keepalived) through the API on PostgreSQL: services, pools,
members and checks with their IPVS settings, listener clashes across layers, warnings
from the nodes' reports, the sync daemon settings, and what a revision carries."""

import json

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient, APITestCase

from cluster.models import IpvsSync, Node
from fulcrum.testing import APIViewTests
from revisions.models import NodeRevision
from services.models import HealthCheck, Member, Pool, VirtualService


def _login(client):
    client.force_authenticate(get_user_model().objects.create_superuser("ops", password="x" * 12))


class Layer4ServiceTest(APIViewTests, APITestCase):
    url = "/api/v1/virtual-services/"
    model = VirtualService

    def setUp(self):
        super().setUp()
        self.pool = Pool.objects.create(name="l4", algorithm="shortest-expected-delay")
        Member.objects.create(pool=self.pool, name="rs1", address="10.0.2.1", port=80)
        self.l7 = Pool.objects.create(name="web")
        VirtualService.objects.create(name="www", vip="10.0.0.9", port=80, default_pool=self.l7)
        p = self.pool.pk
        base = {"vip": "10.0.0.1", "protocol": "tcp", "default_pool": p}
        self.create_data = [
            {**base, "name": "nat", "port": 80, "forwarding": "nat"},
            {**base, "name": "dr", "port": 80, "vip": "10.0.0.2", "forwarding": "direct-routing"},
            {
                **base,
                "name": "dns",
                "port": 80,
                "protocol": "udp",
                "forwarding": "direct-routing",
                "one_packet_scheduling": True,
            },
            {**base, "name": "range", "port": 8000, "port_end": 8099, "vip": "10.0.0.3", "forwarding": "tunnel"},
        ]
        self.update_data = {"forwarding": "tunnel", "enabled": False}
        self.bad_data = [
            ({**base, "name": "u", "port": 53, "protocol": "udp"}, "protocol"),  # UDP needs IPVS
            ({**base, "name": "h", "port": 81, "protocol": "http", "forwarding": "nat"}, "protocol"),
            ({**base, "name": "r", "port": 81, "port_end": 81, "forwarding": "nat"}, "port_end"),
            ({**base, "name": "r2", "port": 81, "port_end": 90}, "port_end"),  # ranges are IPVS only
            (
                {**base, "name": "o", "port": 81, "forwarding": "nat", "one_packet_scheduling": True},
                "one_packet_scheduling",
            ),
            # IPVS keeps no connection for one-packet scheduling: NAT could not translate replies.
            (
                {
                    **base,
                    "name": "n",
                    "port": 81,
                    "protocol": "udp",
                    "forwarding": "nat",
                    "one_packet_scheduling": True,
                },
                "one_packet_scheduling",
            ),
            ({**base, "name": "c", "port": 81, "forwarding": "nat", "allow_cidrs": ["10.0.0.0/8"]}, "allow_cidrs"),
            ({**base, "name": "x", "port": 81, "forwarding": "bridge"}, "forwarding"),
            # A DR member cannot be reached on another port than the VIP's.
            ({**base, "name": "p", "port": 81, "forwarding": "direct-routing"}, "non_field_errors"),
            ({**base, "name": "l7pool", "port": 81, "forwarding": "nat", "default_pool": self.l7.pk}, "default_pool"),
        ]

    def create_objects(self):
        return VirtualService.objects.create(
            name="existing", vip="10.0.9.9", port=80, protocol="tcp", forwarding="nat", default_pool=self.pool
        )

    def test_a_dr_member_on_another_port_is_named(self):
        body = {"name": "p", "vip": "10.0.0.1", "port": 81, "protocol": "tcp", "forwarding": "direct-routing"}
        response = self.client.post(self.url, {**body, "default_pool": self.pool.pk}, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertIn("pools/l4/members/rs1/port: direct-routing cannot change the port", str(response.data))

    def test_tcp_and_udp_share_a_port_but_layers_do_not(self):
        self.create_objects()
        udp = {"name": "u", "vip": "10.0.9.9", "port": 80, "protocol": "udp", "forwarding": "nat"}
        self.assertEqual(
            self.client.post(self.url, {**udp, "default_pool": self.pool.pk}, format="json").status_code, 201
        )
        http = {"name": "h", "vip": "10.0.9.9", "port": 80, "protocol": "http", "default_pool": self.l7.pk}
        response = self.client.post(self.url, http, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertIn("clashes with virtual service existing", str(response.data["vip"]))

    def test_a_range_clashes_with_a_port_inside_it(self):
        self.create_objects()
        body = {"name": "r", "vip": "0.0.0.0", "port": 70, "port_end": 90, "protocol": "tcp", "forwarding": "nat"}
        response = self.client.post(self.url, {**body, "default_pool": self.pool.pk}, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertIn("0.0.0.0:70-90/tcp clashes with virtual service existing", str(response.data["vip"]))


class Layer4PoolTest(APITestCase):
    def setUp(self):
        _login(self.client)
        self.pool = Pool.objects.create(name="l4", algorithm="round-robin")
        self.rs1 = Member.objects.create(pool=self.pool, name="rs1", address="10.0.2.1", port=80)
        VirtualService.objects.create(
            name="nat", vip="10.0.0.1", port=80, protocol="tcp", forwarding="nat", default_pool=self.pool
        )

    def _patch(self, url, body):
        return self.client.patch(url, body, format="json")

    def test_ipvs_settings_are_accepted(self):
        body = {"algorithm": "maglev-hash", "hash_port": True, "hash_fallback": True, "on_failure": "quiesce"}
        response = self._patch(f"/api/v1/pools/{self.pool.pk}/", body)
        self.assertEqual(response.status_code, 200, response.data)
        member = {"min_connections": 10, "max_connections": 100, "forwarding": "tunnel", "weight": 0}
        self.assertEqual(self._patch(f"/api/v1/members/{self.rs1.pk}/", member).status_code, 200)

    def test_settings_the_layer_cannot_do_are_refused(self):
        cases = [
            (f"/api/v1/pools/{self.pool.pk}/", {"hash_port": True}, "hash_port and hash_fallback need"),
            (f"/api/v1/pools/{self.pool.pk}/", {"tls": True, "tls_verify": False}, "a HAProxy setting"),
            (f"/api/v1/pools/{self.pool.pk}/", {"persistence": {"type": "cookie_insert"}}, "none or source"),
            (f"/api/v1/members/{self.rs1.pk}/", {"slowstart_ms": 1000}, "IPVS has no queue or slow start"),
            (f"/api/v1/members/{self.rs1.pk}/", {"min_connections": 5}, "needs max_connections above it"),
        ]
        for url, body, message in cases:
            response = self._patch(url, body)
            self.assertEqual(response.status_code, 400, (body, response.data))
            self.assertIn(message, json.dumps(response.data), body)
        self.pool.refresh_from_db()
        self.assertFalse(self.pool.hash_port or self.pool.tls)

    def test_one_sorry_server_only(self):
        Member.objects.create(pool=self.pool, name="sorry", address="10.0.2.9", port=80, backup=True)
        body = {"pool": self.pool.pk, "name": "sorry2", "address": "10.0.2.8", "port": 80, "backup": True}
        response = self.client.post("/api/v1/members/", body, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertIn("at most one member as backup", json.dumps(response.data))

    def test_keepalived_checks(self):
        url = "/api/v1/health-checks/"
        good = [
            {"type": "dns", "dns_type": "A", "dns_name": "www.example.com"},
            {"type": "script", "script": "/etc/fulcrum/checks/smtp --port=25", "script_dynamic": True},
            {"type": "http", "expect_body": "9b3a0c85a887a256d6939da88aabd8cd", "expect_body_match": "digest"},
            {"type": "http", "expect_body": "^ok (all|some)", "expect_body_match": "regex", "alpha": True},
            {"type": "ping", "retry_interval_ms": 500, "omega": True},
        ]
        for body in good:
            HealthCheck.objects.filter(pool=self.pool).delete()
            response = self.client.post(url, {"pool": self.pool.pk, **body}, format="json")
            self.assertEqual(response.status_code, 201, (body, response.data))
        HealthCheck.objects.filter(pool=self.pool).delete()
        bad = [
            ({"type": "agent", "agent_port": 9000}, "type"),
            ({"type": "script", "script": "/bin/sh -c reboot"}, "script"),
            ({"type": "script", "script": "/etc/fulcrum/checks/../../bin/sh"}, "script"),
            ({"type": "http", "expect_body": "cost $5", "expect_body_match": "string"}, "expect_body"),
            ({"type": "http", "expect_body": "nothex", "expect_body_match": "digest"}, "expect_body"),
            ({"type": "http", "method": "HEAD"}, "method"),
            ({"type": "dns", "dns_name": "bad name"}, "dns_name"),
        ]
        for body, field in bad:
            response = self.client.post(url, {"pool": self.pool.pk, **body}, format="json")
            self.assertEqual(response.status_code, 400, (body, response.data))
            self.assertIn(field, response.data, (body, response.data))
        self.assertFalse(HealthCheck.objects.filter(pool=self.pool).exists())

    def test_proxy_pools_refuse_ipvs_words(self):
        web = Pool.objects.create(name="web")
        VirtualService.objects.create(name="www", vip="10.0.0.1", port=8080, default_pool=web)
        for body, message in (
            ({"algorithm": "never-queue"}, "is an IPVS scheduler"),
            ({"on_failure": "quiesce"}, "an IPVS setting"),
        ):
            response = self._patch(f"/api/v1/pools/{web.pk}/", body)
            self.assertEqual(response.status_code, 400, body)
            self.assertIn(message, json.dumps(response.data))


class Layer4RevisionTest(APITestCase):
    """Publishing renders keepalived's files, checked by keepalived --config-test."""

    def setUp(self):
        _login(self.client)
        self.node = Node.objects.create(name="lb1")
        self.token = self.node.rotate_token()
        self.node.save()
        self.agent = APIClient()
        self.agent.credentials(HTTP_AUTHORIZATION=f"Node {self.token}")
        pool = Pool.objects.create(name="l4", algorithm="dynamic-least-load")
        Member.objects.create(pool=pool, name="rs1", address="10.0.2.1", port=80)
        Member.objects.create(pool=pool, name="far", address="192.0.2.1", port=80, forwarding="tunnel")
        HealthCheck.objects.create(pool=pool, type="tcp", rise=2)
        VirtualService.objects.create(
            name="nat", vip="10.0.0.1", port=80, protocol="tcp", forwarding="nat", default_pool=pool
        )

    def test_revision_carries_keepalived_files(self):
        IpvsSync.objects.create(pk=1, enabled=True, interface="eth1", sync_id=9)
        self.assertEqual(self.client.post("/api/v1/revisions/", {}, format="json").status_code, 201)
        files = NodeRevision.objects.get(node=self.node).files
        self.assertIn("virtual_server 10.0.0.1 80 {", files["keepalived.conf"])
        self.assertIn("lvs_sched wlc", files["keepalived.conf"])  # keepalived's stand-in for dllc
        self.assertIn("lvs_sync_daemon eth1 id 9", files["keepalived.conf"])
        ipvs = json.loads(files["keepalived.d/ipvs.json"])["services"]
        self.assertEqual([(s["name"], s["scheduler"]) for s in ipvs], [("nat", "dllc")])
        self.assertNotIn("pool-l4", files["haproxy.cfg"])  # IPVS pools are not HAProxy backends

    def test_member_runtime_change_reaches_keepalived(self):
        self.assertEqual(self.client.post("/api/v1/revisions/", {}, format="json").status_code, 201)
        rs1 = Member.objects.get(name="rs1")
        response = self.client.post(f"/api/v1/members/{rs1.pk}/runtime/", {"state": "drain"}, format="json")
        self.assertEqual(response.status_code, 200, response.data)
        conf = NodeRevision.objects.get(node=self.node, revision__number=2).files["keepalived.conf"]
        self.assertRegex(conf, r"real_server 10.0.2.1 80 \{\n\s+weight 0\n")  # drained: IPVS quiescing

    def test_warnings_come_from_the_nodes_reports(self):
        status = {
            "networks": ["10.0.2.254/24", "fd00::1/64"],
            "ipvs": [
                {
                    "key": "tcp 10.0.0.1:80",
                    "name": "nat",
                    "scheduler_wanted": "dllc",
                    "scheduler_in_force": "wlc",
                    "message": "kernel has no dllc scheduler",
                }
            ],
        }
        self.assertEqual(self.agent.post("/api/v1/agent/status/", status, format="json").status_code, 204)
        warnings = self.client.get("/api/v1/virtual-services/").data["results"][0]["warnings"]
        text = "\n".join(warnings)
        self.assertNotIn("rs1", text)  # on the node's network
        self.assertNotIn("far", text)  # tunnelled: any network will do
        self.assertIn("node lb1 runs scheduler wlc instead of dllc: kernel has no dllc scheduler", text)
        self.assertIn("rise 2 applies to HAProxy pools only", text)
        VirtualService.objects.update(forwarding="direct-routing")
        Member.objects.filter(name="far").update(forwarding="")
        warnings = self.client.get("/api/v1/virtual-services/").data["results"][0]["warnings"]
        self.assertIn("far (192.0.2.1) is not on a network node lb1 is attached to", "\n".join(warnings))
        self.assertEqual(self.client.get("/api/v1/nodes/").data["results"][0]["networks"], status["networks"])

    def test_bad_status_is_refused(self):
        for body in ({"networks": ["not-an-ip"]}, {"networks": [], "management": "boss"}, {"networks": "10.0.0.1/8"}):
            self.assertEqual(self.agent.post("/api/v1/agent/status/", body, format="json").status_code, 400, body)
        self.assertIn(
            self.client.post("/api/v1/agent/status/", {"networks": []}, format="json").status_code, (401, 403)
        )
        self.node.refresh_from_db()
        self.assertEqual(self.node.networks, [])


class IpvsSyncTest(APITestCase):
    url = "/api/v1/ipvs-sync/"

    def setUp(self):
        _login(self.client)

    def test_read_and_change(self):
        self.assertEqual(self.client.get(self.url).data["enabled"], False)
        body = {"enabled": True, "interface": "eth1", "sync_id": 7, "group": "239.1.1.1", "max_packet": 1400}
        response = self.client.patch(self.url, body, format="json")
        self.assertEqual(response.status_code, 200, response.data)
        self.assertEqual(IpvsSync.load().sync_id, 7)

    def test_bad_settings_change_nothing(self):
        for body, field in (
            ({"interface": "eth 1"}, "interface"),
            ({"interface": "eth1\nlvs_flush"}, "interface"),
            ({"sync_id": 256}, "sync_id"),
            ({"group": "10.0.0.1"}, "group"),
            ({"ttl": 0}, "ttl"),
            ({"surprise": True}, "surprise"),
        ):
            response = self.client.patch(self.url, body, format="json")
            self.assertEqual(response.status_code, 400, body)
            self.assertIn(field, response.data, (body, response.data))
        self.assertEqual(IpvsSync.load().interface, "eth0")
