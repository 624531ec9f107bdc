"""CRUD and validation of virtual services, pools, members and health checks on PostgreSQL."""

from rest_framework.test import APITestCase

from fulcrum.testing import APIViewTests
from services.models import HealthCheck, Member, Pool, VirtualService


class PoolTest(APIViewTests, APITestCase):
    url = "/api/v1/pools/"
    model = Pool
    create_data = [
        {"name": "images", "algorithm": "least-connections"},
        {"name": "app.v2", "algorithm": "source-hash", "description": "blue/green"},
    ]
    update_data = {"algorithm": "weighted-round-robin"}
    bad_data = [
        ({"name": "web"}, "name"),  # duplicate
        ({"name": "bad name"}, "name"),
        ({"name": "x\nbackend evil"}, "name"),
        ({"name": "-leading"}, "name"),
        ({"name": "ok", "algorithm": "random"}, "algorithm"),
        ({}, "name"),
    ]

    def create_objects(self):
        return Pool.objects.create(name="web")

    def test_pool_shows_members_and_check(self):
        pool = self.create_objects()
        Member.objects.create(pool=pool, name="s1", address="10.0.1.1", port=80)
        HealthCheck.objects.create(pool=pool, type="http", path="/health")
        data = self.client.get(self.detail(pool)).data
        self.assertEqual([m["name"] for m in data["members"]], ["s1"])
        self.assertEqual(data["health_check"]["path"], "/health")

    def test_pool_without_check_shows_null(self):
        self.assertIsNone(self.client.get(self.detail(self.create_objects())).data["health_check"])

    def test_pool_in_use_cannot_be_deleted(self):
        pool = self.create_objects()
        VirtualService.objects.create(name="web", vip="10.0.0.1", port=80, default_pool=pool)
        response = self.client.delete(self.detail(pool))
        self.assertEqual(response.status_code, 409)
        self.assertIn("web", response.data["detail"])
        self.assertTrue(Pool.objects.filter(pk=pool.pk).exists())


class MemberTest(APIViewTests, APITestCase):
    url = "/api/v1/members/"
    model = Member
    update_data = {"state": "drain", "weight": 0}

    def setUp(self):
        super().setUp()
        self.pool = Pool.objects.create(name="web")
        self.create_data = [
            {"pool": self.pool.pk, "name": "s2", "address": "10.0.1.2", "port": 8080, "weight": 5, "state": "enabled"},
            {
                "pool": self.pool.pk,
                "name": "v6",
                "address": "2001:db8::2",
                "port": 80,
                "weight": 1,
                "state": "disabled",
            },
        ]
        self.bad_data = [
            ({**self.create_data[0], "address": "10.0.1.300"}, "address"),
            ({**self.create_data[0], "address": "example.com"}, "address"),
            ({**self.create_data[0], "port": 0}, "port"),
            ({**self.create_data[0], "port": 65536}, "port"),
            ({**self.create_data[0], "weight": 257}, "weight"),
            ({**self.create_data[0], "state": "gone"}, "state"),
            ({**self.create_data[0], "pool": 99999}, "pool"),
            ({**self.create_data[0], "name": "s1"}, "name"),  # duplicate name in pool
            ({**self.create_data[0], "address": "10.0.1.1", "port": 80}, "address"),  # duplicate endpoint
            ({**self.create_data[0], "port": "eighty"}, "port"),
        ]

    def create_objects(self):
        return Member.objects.create(pool=self.pool, name="s1", address="10.0.1.1", port=80)

    def test_same_endpoint_in_another_pool_is_fine(self):
        self.create_objects()
        other = Pool.objects.create(name="other")
        body = {"pool": other.pk, "name": "s1", "address": "10.0.1.1", "port": 80}
        self.assertEqual(self.client.post(self.url, body, format="json").status_code, 201)

    def test_filter_by_pool(self):
        self.create_objects()
        other = Pool.objects.create(name="other")
        Member.objects.create(pool=other, name="o1", address="10.0.1.9", port=80)
        names = [m["name"] for m in self.client.get(f"{self.url}?pool={other.pk}").data["results"]]
        self.assertEqual(names, ["o1"])


class HealthCheckTest(APIViewTests, APITestCase):
    url = "/api/v1/health-checks/"
    model = HealthCheck
    update_data = {"interval_ms": 5000, "rise": 3}

    def setUp(self):
        super().setUp()
        self.pool = Pool.objects.create(name="web")
        self.free_pool = Pool.objects.create(name="free")
        self.create_data = [
            {
                "pool": self.free_pool.pk,
                "type": "http",
                "path": "/health?deep=1",
                "expected_status": 204,
                "host": "www.example.com",
                "interval_ms": 1000,
                "timeout_ms": 500,
                "rise": 2,
                "fall": 3,
            },
        ]
        base = {"pool": self.free_pool.pk, "type": "http"}
        self.bad_data = [
            ({**base, "path": "/a b"}, "path"),
            ({**base, "path": "/a\nb"}, "path"),
            ({**base, "path": "health"}, "path"),
            ({**base, "path": "/x'#"}, "path"),
            ({**base, "expected_status": 99}, "expected_status"),
            ({**base, "host": "bad host"}, "host"),
            ({**base, "interval_ms": 1000, "timeout_ms": 2000}, "timeout_ms"),
            ({**base, "rise": 0}, "rise"),
            ({**base, "type": "icmp"}, "type"),
            ({"pool": self.pool.pk, "type": "tcp"}, "pool"),  # the pool already has a check
        ]

    def create_objects(self):
        return HealthCheck.objects.create(pool=self.pool, type="tcp")

    def test_timeout_above_existing_interval_is_refused_on_update(self):
        check = self.create_objects()
        response = self.client.patch(self.detail(check), {"timeout_ms": 3000}, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertIn("timeout_ms", response.data)


class VirtualServiceTest(APIViewTests, APITestCase):
    url = "/api/v1/virtual-services/"
    model = VirtualService
    update_data = {"enabled": False, "port": 8080}

    def setUp(self):
        super().setUp()
        self.pool = Pool.objects.create(name="web")
        self.tcp_pool = Pool.objects.create(name="db")
        self.create_data = [
            {
                "name": "shop",
                "vip": "10.0.0.2",
                "port": 80,
                "protocol": "http",
                "enabled": True,
                "default_pool": self.pool.pk,
            },
            {
                "name": "db",
                "vip": "2001:db8::10",
                "port": 5432,
                "protocol": "tcp",
                "enabled": True,
                "default_pool": self.tcp_pool.pk,
            },
        ]
        ok = self.create_data[0]
        self.bad_data = [
            ({**ok, "vip": "10.0.0.1"}, "vip"),  # same VIP:port as "web"
            ({**ok, "vip": "0.0.0.0"}, "vip"),  # wildcard covers 10.0.0.1:80
            ({**ok, "vip": "300.1.1.1"}, "vip"),
            ({**ok, "vip": "10.0.0.2\nbind :22"}, "vip"),
            ({**ok, "port": 0}, "port"),
            ({**ok, "port": 70000}, "port"),
            ({**ok, "default_pool": 99999}, "default_pool"),
            ({**ok, "default_pool": None}, "default_pool"),
            ({**ok, "protocol": "udp"}, "protocol"),
            ({**ok, "name": "web"}, "name"),
            ({**ok, "name": "a b"}, "name"),
            ({**ok, "protocol": "tcp"}, "default_pool"),  # pool "web" already serves http
            ({**ok, "enabled": "maybe"}, "enabled"),
        ]

    def create_objects(self):
        return VirtualService.objects.create(name="web", vip="10.0.0.1", port=80, default_pool=self.pool)

    def test_omitted_protocol_is_http_when_checking_the_pool(self):
        self.create_objects()
        body = {"name": "more", "vip": "10.0.0.9", "port": 80, "default_pool": self.pool.pk}
        response = self.client.post(self.url, body, format="json")
        self.assertEqual(response.status_code, 201, response.data)
        self.assertEqual(response.data["protocol"], "http")

    def test_same_port_on_other_vip_is_fine(self):
        self.create_objects()
        body = {**self.create_data[0], "vip": "10.0.0.3"}
        self.assertEqual(self.client.post(self.url, body, format="json").status_code, 201)

    def test_update_into_a_clash_is_refused(self):
        self.create_objects()
        other = VirtualService.objects.create(name="other", vip="10.0.0.5", port=80, default_pool=self.pool)
        response = self.client.patch(self.detail(other), {"vip": "10.0.0.1"}, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertIn("clashes with virtual service web", response.data["vip"][0])
        other.refresh_from_db()
        self.assertEqual(other.vip, "10.0.0.5")

    def test_a_listener_is_checked_before_the_service_exists(self):
        """The wizard asks at its listener step, before it makes a pool: the same field errors
        creating the service would give, and nothing saved."""
        self.create_objects()  # web on 10.0.0.1:80
        check = f"{self.url}check-listener/"
        services = VirtualService.objects.count()

        def refused(body):
            answer = self.client.post(check, body, format="json")
            self.assertEqual(answer.status_code, 400, body)
            return {field: " ".join(map(str, errors)) for field, errors in answer.data.items()}

        free = {"name": "new", "vip": "10.0.0.2", "port": 80}
        self.assertEqual(self.client.post(check, free, format="json").status_code, 204)
        self.assertIn(
            "clashes with virtual service web", refused({"name": "new", "vip": "10.0.0.1", "port": 80})["vip"]
        )
        self.assertIn("clashes with virtual service web", refused({"name": "new", "vip": "0.0.0.0", "port": 80})["vip"])
        ok = {"name": "new", "vip": "10.0.0.1", "port": 53, "protocol": "udp"}
        self.assertEqual(self.client.post(check, ok, format="json").status_code, 204)
        self.assertIn("already exists", refused({"name": "web", "vip": "10.0.0.2", "port": 80})["name"])
        self.assertIn("link-local", refused({"name": "new", "vip": "fe80::1", "port": 80})["vip"])
        self.assertIn("port", refused({"name": "new", "vip": "10.0.0.2", "port": 0}))
        self.assertIn(
            "outside 81..65535", refused({"name": "new", "vip": "10.0.0.2", "port": 80, "port_end": 80})["port_end"]
        )
        self.assertEqual(VirtualService.objects.count(), services)

    def test_malformed_json_is_refused(self):
        response = self.client.generic("POST", self.url, "{not json", content_type="application/json")
        self.assertEqual(response.status_code, 400)
