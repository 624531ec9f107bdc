"""Layer 7 objects through the API on PostgreSQL: rules and their order, persistence, TLS
fields, protection, and runtime member changes. Meaning is checked by the compiler."""

import json

from django.contrib.auth import get_user_model
from rest_framework.test import APITestCase

from cluster.models import Node
from fulcrum.testing import APIViewTests
from revisions.models import NodeRevision, Revision
from services.models import Member, Pool, Rule, VirtualService


def _prefix(value):
    return [{"kind": "path_prefix", "values": [value], "name": "", "negate": False}]


class RuleTest(APIViewTests, APITestCase):
    url = "/api/v1/rules/"
    model = Rule

    def setUp(self):
        super().setUp()
        self.web = Pool.objects.create(name="web")
        self.api = Pool.objects.create(name="api")
        self.service = VirtualService.objects.create(name="www", vip="10.0.0.1", port=80, default_pool=self.web)
        vs = self.service.pk
        self.create_data = [
            {
                "virtual_service": vs,
                "name": "api",
                "conditions": _prefix("/api/"),
                "action": "use_pool",
                "pool": self.api.pk,
            },
            {
                "virtual_service": vs,
                "name": "hdr",
                "conditions": [{"kind": "header_present", "values": [], "name": "X-Debug", "negate": True}],
                "action": "set_response_header",
                "header_name": "X-Seen",
                "header_value": "100% yes",
            },
        ]
        self.update_data = {
            "enabled": False,
            "conditions": [{"kind": "method", "values": ["POST"], "name": "", "negate": False}],
        }
        ok = {
            "virtual_service": vs,
            "name": "x",
            "action": "use_pool",
            "pool": self.api.pk,
            "conditions": _prefix("/x"),
        }
        self.bad_data = [
            ({**ok, "pool": None}, "pool"),  # use_pool needs a pool
            ({**ok, "conditions": [{"kind": "path_regex", "values": ["(open"]}]}, "conditions"),
            # Python's re takes these; HAProxy's PCRE2 does not.
            ({**ok, "conditions": [{"kind": "path_regex", "values": ["(?u)abc"]}]}, "conditions"),
            ({**ok, "conditions": [{"kind": "path_regex", "values": ["a{1,100000}"]}]}, "conditions"),
            ({**ok, "conditions": [{"kind": "path_prefix", "values": ["no-slash"]}]}, "conditions"),
            ({**ok, "conditions": [{"kind": "telepathy", "values": ["x"]}]}, "conditions"),
            ({**ok, "conditions": [{"kind": "path_prefix", "values": ["/x"], "extra": 1}]}, "conditions"),
            ({**ok, "conditions": []}, "conditions"),
            ({**ok, "action": "set_request_header", "header_name": "X-A", "header_value": "a\nb"}, "header_value"),
            ({**ok, "action": "set_request_header", "header_name": "X A", "header_value": "v"}, "header_name"),
            ({**ok, "action": "redirect", "redirect_location": "nowhere"}, "redirect_location"),
            ({**ok, "action": "deny", "deny_status": 418}, "deny_status"),
            ({**ok, "name": "a b"}, "name"),
            ({**ok, "name": "first"}, "name"),  # duplicate in this service
            ({**ok, "position": -1}, "position"),
        ]

    def create_objects(self):
        return Rule.objects.create(
            virtual_service=self.service, position=0, name="first", conditions=_prefix("/"), action="deny"
        )

    def _order(self):
        return list(
            Rule.objects.filter(virtual_service=self.service).order_by("position").values_list("name", flat=True)
        )

    def test_insert_move_and_delete_keep_positions_contiguous(self):
        self.create_objects()
        body = {"virtual_service": self.service.pk, "action": "deny", "conditions": _prefix("/z")}
        for name in ("b", "c"):
            self.assertEqual(self.client.post(self.url, {**body, "name": name}, format="json").status_code, 201)
        self.assertEqual(self._order(), ["first", "b", "c"])
        self.assertEqual(
            self.client.post(self.url, {**body, "name": "top", "position": 0}, format="json").status_code, 201
        )
        self.assertEqual(self._order(), ["top", "first", "b", "c"])
        c = Rule.objects.get(name="c")
        self.assertEqual(self.client.patch(self.detail(c), {"position": 1}, format="json").status_code, 200)
        self.assertEqual(self._order(), ["top", "c", "first", "b"])
        self.assertEqual(self.client.patch(self.detail(c), {"position": 99}, format="json").data["position"], 3)
        self.assertEqual(self._order(), ["top", "first", "b", "c"])
        self.client.delete(self.detail(Rule.objects.get(name="first")))
        positions = list(Rule.objects.order_by("position").values_list("position", flat=True))
        self.assertEqual(positions, [0, 1, 2])

    def test_filter_by_service_is_in_order(self):
        self.create_objects()
        names = [r["name"] for r in self.client.get(f"{self.url}?virtual_service={self.service.pk}").data["results"]]
        self.assertEqual(names, ["first"])

    def test_rule_on_tcp_service_is_refused(self):
        tcp = VirtualService.objects.create(name="t", vip="10.0.0.2", port=22, protocol="tcp", default_pool=self.api)
        body = {"virtual_service": tcp.pk, "name": "x", "action": "deny", "conditions": _prefix("/")}
        response = self.client.post(self.url, body, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertIn("http or https", str(response.data))


class Layer7ServiceTest(APITestCase):
    def setUp(self):
        self.client.force_authenticate(get_user_model().objects.create_superuser("ops", password="x" * 12))
        self.web = Pool.objects.create(name="web")

    def _post(self, **fields):
        body = {"name": "svc", "vip": "10.0.0.5", "port": 80, "default_pool": self.web.pk, **fields}
        return self.client.post("/api/v1/virtual-services/", body, format="json")

    def test_protection_fields_round_trip(self):
        fields = {
            "allow_cidrs": ["10.0.0.0/8"],
            "deny_cidrs": ["10.6.0.0/16"],
            "rate_limit_requests": 50,
            "conn_limit": 10,
            "max_body_bytes": 1024,
            "compression": True,
            "forwarded": "both",
            "error_pages": [{"status": 503, "content_type": "text/html", "body": "<p>later</p>"}],
        }
        response = self._post(**fields)
        self.assertEqual(response.status_code, 201, response.data)
        for key, value in fields.items():
            self.assertEqual(response.data[key], value, key)

    def test_bad_protection_names_the_field_and_stores_nothing(self):
        cases = [
            ({"allow_cidrs": ["10.0.0.0/8", "bogus"]}, "allow_cidrs", "1: not an address"),
            ({"compression_types": ["text html"]}, "compression_types", "media type"),
            ({"protocol": "https"}, "default_certificate", "at least one certificate"),
            ({"error_pages": [{"status": 418, "body": "x"}]}, "error_pages", ""),
            ({"client_auth": "required"}, "client_auth", "only an https service"),
        ]
        for fields, field, fragment in cases:
            response = self._post(**fields)
            self.assertEqual(response.status_code, 400, fields)
            self.assertIn(field, response.data, (fields, response.data))
            self.assertIn(fragment, str(response.data[field]))
        self.assertFalse(VirtualService.objects.exists())

    def test_pool_persistence_defaults_and_validation(self):
        response = self.client.post(
            "/api/v1/pools/",
            {"name": "sticky", "persistence": {"type": "cookie_insert", "cookie_name": "LB"}},
            format="json",
        )
        self.assertEqual(response.status_code, 201, response.data)
        self.assertEqual(response.data["persistence"]["cookie_name"], "LB")
        self.assertTrue(response.data["persistence"]["httponly"])
        bad = self.client.post(
            "/api/v1/pools/",
            {"name": "bad", "persistence": {"type": "cookie_insert", "cookie_name": "a b"}},
            format="json",
        )
        self.assertEqual(bad.status_code, 400)
        self.assertIn("cookie_name", str(bad.data["persistence"]))
        self.assertFalse(Pool.objects.filter(name="bad").exists())

    def test_cookie_persistence_on_pool_of_tcp_service_is_refused(self):
        tcp_pool = Pool.objects.create(name="tcp")
        VirtualService.objects.create(name="t", vip="10.0.0.2", port=22, protocol="tcp", default_pool=tcp_pool)
        response = self.client.patch(
            f"/api/v1/pools/{tcp_pool.pk}/", {"persistence": {"type": "cookie_insert"}}, format="json"
        )
        self.assertEqual(response.status_code, 400)
        self.assertIn("needs an http or https service", str(response.data["persistence"]))


class MemberRuntimeTest(APITestCase):
    def setUp(self):
        self.client.force_authenticate(get_user_model().objects.create_superuser("ops", password="x" * 12))
        self.node = Node.objects.create(name="lb1")
        self.pool = Pool.objects.create(name="web", algorithm="weighted-round-robin")
        self.s1 = Member.objects.create(pool=self.pool, name="s1", address="10.0.1.1", port=80, weight=2)
        VirtualService.objects.create(name="www", vip="10.0.0.1", port=80, default_pool=self.pool)

    def _runtime(self, member, body):
        return self.client.post(f"/api/v1/members/{member.pk}/runtime/", body, format="json")

    def test_member_not_live_is_refused(self):
        response = self._runtime(self.s1, {"weight": 5})
        self.assertEqual(response.status_code, 409)
        self.assertIn("apply the pending changes first", str(response.data))

    def test_runtime_change_publishes_only_that_change(self):
        self.assertEqual(self.client.post("/api/v1/revisions/", {}, format="json").status_code, 201)
        Member.objects.create(pool=self.pool, name="s2", address="10.0.1.2", port=80)  # pending, not applied
        response = self._runtime(self.s1, {"weight": 7, "state": "drain"})
        self.assertEqual(response.status_code, 200, response.data)
        self.assertEqual(response.data["revision"], 2)
        self.assertEqual((response.data["member"]["weight"], response.data["member"]["state"]), (7, "drain"))
        live = Revision.objects.get(number=2).snapshot["pools"][0]["members"]
        self.assertEqual([(m["name"], m["weight"], m["state"]) for m in live], [("s1", 7, "drain")])
        files = NodeRevision.objects.get(revision__number=2, node=self.node).files
        self.assertIn("server s1 10.0.1.1:80 weight 0", files["haproxy.cfg"])  # drain is weight 0
        before = NodeRevision.objects.get(revision__number=1, node=self.node).files
        self.assertEqual(_structure(before), _structure(files))  # the agent needs no reload

    def test_unknown_runtime_field_is_refused(self):
        self.assertEqual(self._runtime(self.s1, {"port": 81}).status_code, 400)
        self.assertEqual(self._runtime(self.s1, {}).status_code, 400)


def _structure(files):
    return json.loads(files["haproxy.d/servers.json"])["structure"]
