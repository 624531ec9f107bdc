"""A single write is verified against what it can affect (snapshots.freeze.freeze_around),
not the whole configuration: what verify() says about an object in its neighbourhood is what
it says about it in the whole; the neighbourhood stays small however large the rest grows;
and the cross-object refusals (a pool in two modes, a clash) still reach the operator."""

import ipaddress

from django.test import TestCase
from rest_framework.test import APITestCase

from accounts.tests.people import person
from compiler import VerifyError, snapshot_from_dict, verify
from services.models import Member, Pool, Rule, VirtualService
from snapshots import freeze as snapshot


def problems(frozen):
    try:
        verify(snapshot_from_dict(frozen))
    except VerifyError as err:
        return set(err.problems)
    return set()


def about(found, prefixes):
    return {(path, message) for path, message in found if path.startswith(tuple(prefixes))}


def condition(path):
    return [{"kind": "path_prefix", "values": [path], "name": "", "negate": False}]


class NeighbourhoodTest(TestCase):
    """A configuration with every kind of cross-object trouble, stored as it is (the ORM does
    not verify): each object's problems in its neighbourhood are its problems in the whole."""

    def setUp(self):
        shared = Pool.objects.create(name="shared")
        Member.objects.create(pool=shared, name="m", address="10.1.0.1", port=80)
        l4 = Pool.objects.create(name="l4", algorithm="round-robin")
        Member.objects.create(pool=l4, name="rs", address="10.1.0.2", port=80)
        make = VirtualService.objects.create
        make(name="web", vip="10.0.0.1", port=80, protocol="http", default_pool=shared)
        make(name="web-tcp", vip="10.0.0.2", port=443, protocol="tcp", default_pool=shared)  # two modes
        make(name="twin", vip="10.0.0.1", port=80, protocol="tcp", default_pool=l4)  # clashes with web
        make(name="any", vip="0.0.0.0", port=8080, protocol="tcp", default_pool=l4)  # a wildcard
        make(name="near", vip="10.0.0.3", port=8080, protocol="tcp", default_pool=l4)  # clashes with any
        make(name="v6", vip="::", port=8080, protocol="tcp", default_pool=l4)  # another family
        nat = make(name="nat", vip="10.0.0.4", port=80, protocol="tcp", forwarding="nat", default_pool=l4)
        ruled = make(name="ruled", vip="10.0.0.5", port=80, protocol="http", default_pool=l4)
        Rule.objects.create(virtual_service=ruled, position=0, name="r", action="use_pool", pool=shared,
                            conditions=condition("/a"))  # fmt: skip
        self.nat = nat
        for i in range(40):  # the rest of a configuration, which none of the above touches
            pool = Pool.objects.create(name=f"other-{i}")
            Member.objects.create(pool=pool, name="m", address=f"10.2.0.{i + 1}", port=80)
            make(name=f"other-{i}", vip=f"10.3.0.{i + 1}", port=80, protocol="http", default_pool=pool)

    def test_each_object_has_the_same_problems_in_its_neighbourhood_as_in_the_whole(self):
        whole = problems(snapshot.freeze(0))
        self.assertTrue(about(whole, ["pools/shared"]) and about(whole, ["virtual-services/web/vip"]), whole)
        self.assertTrue(about(whole, ["virtual-services/near/vip"]), whole)
        for service in VirtualService.objects.all():
            prefix = [f"virtual-services/{service.name}/"]
            around = problems(snapshot.freeze_around(services=[service.pk]))
            self.assertEqual(about(around, prefix), about(whole, prefix), service.name)
        for pool in Pool.objects.all():
            prefix = [f"pools/{pool.name}/", f"pools/{pool.name}"]
            around = problems(snapshot.freeze_around(pools=[pool.pk]))
            self.assertEqual(about(around, prefix), about(whole, prefix), pool.name)

    def test_the_neighbourhood_is_what_the_object_touches(self):
        # Its own pool, and the IPv4 wildcard listener (with its pool): none of the rest.
        frozen = snapshot.freeze_around(services=[VirtualService.objects.get(name="other-7").pk])
        self.assertEqual([s["name"] for s in frozen["virtual_services"]], ["any", "other-7"])
        self.assertEqual([p["name"] for p in frozen["pools"]], ["l4", "other-7"])
        # A new listener on web's address meets web and twin; a wildcard meets its whole family.
        on_web = snapshot.freeze_around(vips=["10.0.0.1"])
        self.assertEqual({s["name"] for s in on_web["virtual_services"]}, {"web", "twin", "any"})
        wildcard = snapshot.freeze_around(vips=["0.0.0.0"])
        names = {s["name"] for s in wildcard["virtual_services"]}
        self.assertNotIn("v6", names)
        self.assertTrue(all(ipaddress.ip_address(s["vip"]).version == 4 for s in wildcard["virtual_services"]))
        self.assertEqual(len(names), VirtualService.objects.exclude(vip="::").count())
        # The pool "shared" is used by web (http), web-tcp (tcp) and ruled's rule: all of them.
        shared = snapshot.freeze_around(pools=[Pool.objects.get(name="shared").pk])
        self.assertLessEqual({"web", "web-tcp", "ruled"}, {s["name"] for s in shared["virtual_services"]})


class RefusedAcrossObjectsTest(APITestCase):
    """What a write breaks elsewhere is refused, and nothing is stored."""

    def setUp(self):
        self.client.force_authenticate(person("scope", "admin"))
        self.web = Pool.objects.create(name="web")
        Member.objects.create(pool=self.web, name="s1", address="10.1.0.1", port=80)
        self.tcp = Pool.objects.create(name="tcp")
        Member.objects.create(pool=self.tcp, name="s1", address="10.1.0.2", port=80)
        VirtualService.objects.create(name="site", vip="10.0.0.1", port=80, protocol="http", default_pool=self.web)
        VirtualService.objects.create(name="db", vip="10.0.0.2", port=5432, protocol="tcp", default_pool=self.tcp)
        self.ruled = VirtualService.objects.create(
            name="ruled", vip="10.0.0.3", port=80, protocol="http", default_pool=self.web
        )
        for i in range(20):
            pool = Pool.objects.create(name=f"other-{i}")
            VirtualService.objects.create(name=f"other-{i}", vip=f"10.3.0.{i + 1}", port=80, default_pool=pool)

    def test_a_service_that_would_use_an_http_pool_in_tcp_mode(self):
        body = {"name": "raw", "vip": "10.0.0.9", "port": 81, "protocol": "tcp", "default_pool": self.web.pk}
        answer = self.client.post("/api/v1/virtual-services/", body, format="json")
        self.assertEqual(answer.status_code, 400, answer.data)
        self.assertIn("used by both http and tcp virtual services", str(answer.data))
        self.assertFalse(VirtualService.objects.filter(name="raw").exists())

    def test_a_rule_that_would_send_http_to_a_tcp_pool(self):
        body = {"virtual_service": self.ruled.pk, "name": "to-db", "conditions": condition("/db"),
                "action": "use_pool", "pool": self.tcp.pk}  # fmt: skip
        answer = self.client.post("/api/v1/rules/", body, format="json")
        self.assertEqual(answer.status_code, 400, answer.data)
        self.assertIn("used by both http and tcp virtual services", str(answer.data))
        self.assertFalse(Rule.objects.exists())

    def test_a_pool_that_would_become_an_ipvs_scheduler_under_an_http_service(self):
        answer = self.client.patch(f"/api/v1/pools/{self.web.pk}/", {"algorithm": "shortest-expected-delay"}, format="json")  # fmt: skip
        self.assertEqual(answer.status_code, 400, answer.data)
        self.assertIn("is an IPVS scheduler", str(answer.data["algorithm"]))
        self.assertEqual(Pool.objects.get(pk=self.web.pk).algorithm, "round-robin")

    def test_a_service_moved_onto_another_services_listener(self):
        answer = self.client.patch(f"/api/v1/virtual-services/{self.ruled.pk}/", {"vip": "0.0.0.0"}, format="json")
        self.assertEqual(answer.status_code, 400, answer.data)
        self.assertIn("clashes with virtual service", str(answer.data["vip"]))
        self.assertEqual(str(VirtualService.objects.get(pk=self.ruled.pk).vip), "10.0.0.3")
