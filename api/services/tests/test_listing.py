"""GET /virtual-services/ and /pools/ with ?search=&ordering=: one page of a long list, searched
and sorted by the database, as the console's lists ask for them."""

from django.contrib.auth import get_user_model
from rest_framework.test import APITestCase

from cluster.models import Node
from services.api.serializers import service_advice
from services.models import HealthCheck, Member, Pool, VirtualService

URL = "/api/v1/virtual-services/"
POOLS = "/api/v1/pools/"


class ServiceListTest(APITestCase):
    @classmethod
    def setUpTestData(cls):
        cls.user = get_user_model().objects.create_superuser("tester", password="correct horse battery")
        web, db = Pool.objects.create(name="frontends"), Pool.objects.create(name="databases")
        for name, vip, port, protocol, pool, enabled, description in [
            ("web", "10.0.0.10", 443, "https", web, True, "the shop"),
            ("api", "10.0.0.9", 8080, "http", web, True, ""),
            ("pg", "10.0.0.100", 5432, "tcp", db, False, ""),
            ("web-v6", "2001:db8::10", 443, "https", web, True, "shop over IPv6"),
        ]:
            VirtualService.objects.create(
                name=name,
                vip=vip,
                port=port,
                protocol=protocol,
                default_pool=pool,
                enabled=enabled,
                description=description,
            )

    def setUp(self):
        self.client.force_authenticate(self.user)

    def names(self, query):
        answer = self.client.get(URL + query)
        self.assertEqual(answer.status_code, 200, answer.content[:300])
        body = answer.json()
        return body["count"], [row["name"] for row in body["results"]]

    def test_every_word_must_appear_in_a_searched_field(self):
        cases = {
            "?search=shop": (2, ["web", "web-v6"]),  # description
            "?search=SHOP%20ipv6": (1, ["web-v6"]),  # words in any case, all of them
            "?search=10.0.0.1": (2, ["pg", "web"]),  # the VIP as text
            "?search=db8": (1, ["web-v6"]),
            "?search=8080": (1, ["api"]),  # the port
            "?search=databases": (1, ["pg"]),  # the pool's name
            "?search=tcp": (1, ["pg"]),
            "?search=": (4, ["api", "pg", "web", "web-v6"]),
            "?search=nothing": (0, []),
        }
        for query, expected in cases.items():
            self.assertEqual(self.names(query), expected, query)

    def test_ordering_by_columns_with_ties_broken_by_id(self):
        cases = {
            "": ["api", "pg", "web", "web-v6"],  # the model's order: by name
            "?ordering=-name": ["web-v6", "web", "pg", "api"],
            "?ordering=vip,port": ["api", "web", "pg", "web-v6"],  # addresses as addresses: .9 < .10 < .100
            "?ordering=-port,name": ["api", "pg", "web", "web-v6"],
            "?ordering=default_pool_name,-name": ["pg", "web-v6", "web", "api"],
            "?ordering=enabled,name": ["pg", "api", "web", "web-v6"],
            "?ordering=protocol": ["api", "web", "web-v6", "pg"],  # web before web-v6: created first
        }
        for query, expected in cases.items():
            self.assertEqual(self.names(query)[1], expected, query)

    def test_a_page_of_the_searched_and_sorted_rows(self):
        self.assertEqual(self.names("?search=frontends&ordering=-vip&limit=1&offset=1"), (3, ["web"]))
        self.assertEqual(self.names("?search=frontends&ordering=-vip&limit=2&offset=2"), (3, ["api"]))

    def test_a_page_warns_as_the_whole_configuration_does(self):
        """A page's warnings come from its services' neighbourhood, not from all of them."""
        Node.objects.create(name="lb1", networks=["10.0.0.1/24"])  # the IPv6 VIP is on none of its networks
        whole = service_advice()
        assert any(whole.values()), whole  # something to compare
        for offset in range(4):
            (row,) = self.client.get(f"{URL}?limit=1&offset={offset}&ordering=vip").json()["results"]
            self.assertEqual(row["warnings"], whole.get(row["name"], []), row["name"])

    def test_bad_parameters_are_refused_on_their_name(self):
        for query, field in [
            ("?ordering=password", "ordering"),
            ("?ordering=name,", "ordering"),
            ("?ordering=default_pool__name", "ordering"),  # columns, not model lookups
            ("?search=" + "x" * 201, "search"),
            ("?search=a%00b", "search"),
            ("?limit=0", "limit"),
        ]:
            answer = self.client.get(URL + query)
            self.assertEqual(answer.status_code, 400, query)
            self.assertIn(field, answer.json(), query)


class PoolListTest(APITestCase):
    @classmethod
    def setUpTestData(cls):
        cls.user = get_user_model().objects.create_superuser("tester", password="correct horse battery")
        for name, algorithm, members, check in [
            ("web", "round-robin", [("s1", "10.0.1.1"), ("s2", "10.0.1.2"), ("s3", "10.0.1.3")], "http"),
            ("db", "least-connections", [("pg1", "10.0.2.1")], "tcp"),
            ("empty", "source-hash", [], None),
        ]:
            pool = Pool.objects.create(name=name, algorithm=algorithm)
            for member, address in members:
                Member.objects.create(pool=pool, name=member, address=address, port=80)
            if check:
                HealthCheck.objects.create(pool=pool, type=check)

    def setUp(self):
        self.client.force_authenticate(self.user)

    def rows(self, query):
        answer = self.client.get(POOLS + query)
        self.assertEqual(answer.status_code, 200, answer.content[:300])
        body = answer.json()
        return body["count"], [(row["name"], len(row["members"])) for row in body["results"]]

    def test_searched_by_its_members_once_each_with_all_its_members(self):
        cases = {
            "?search=10.0.1": (1, [("web", 3)]),  # three members match: the pool once, whole
            "?search=s2": (1, [("web", 3)]),
            "?search=pg1%20least": (1, [("db", 1)]),
            "?search=http": (1, [("web", 3)]),  # the check's type
            "?search=source": (1, [("empty", 0)]),
        }
        for query, expected in cases.items():
            self.assertEqual(self.rows(query), expected, query)

    def test_ordering_by_members_and_check(self):
        self.assertEqual(self.rows("?ordering=-members")[1], [("web", 3), ("db", 1), ("empty", 0)])
        self.assertEqual(self.rows("?ordering=members,name&search=0")[1], [("db", 1), ("web", 3)])
        self.assertEqual([n for n, _ in self.rows("?ordering=health_check,name")[1]], ["web", "db", "empty"])

    def test_a_pool_is_still_written_and_deleted(self):
        pool = Pool.objects.get(name="empty")
        answer = self.client.patch(f"{POOLS}{pool.pk}/", {"algorithm": "round-robin"}, format="json")
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertEqual(self.client.delete(f"{POOLS}{pool.pk}/").status_code, 204)
