"""N+1 guard: list endpoints cost the same number of queries for 1 row as for 20."""

from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APITestCase

from services.models import HealthCheck, Member, Pool, VirtualService

ENDPOINTS = ["/api/v1/pools/", "/api/v1/members/", "/api/v1/virtual-services/", "/api/v1/health-checks/"]


class QueryCountTest(APITestCase):
    def setUp(self):
        self.client.force_authenticate(get_user_model().objects.create_superuser("q", password="correct horse battery"))

    def add_rows(self, start, count):
        for i in range(start, start + count):
            pool = Pool.objects.create(name=f"p{i}")
            HealthCheck.objects.create(pool=pool)
            Member.objects.create(pool=pool, name="m", address=f"10.0.{i}.1", port=80)
            VirtualService.objects.create(name=f"v{i}", vip=f"10.1.{i}.1", port=80, default_pool=pool)

    def queries(self, url):
        with CaptureQueriesContext(connection) as captured:
            self.assertEqual(self.client.get(url).status_code, 200)
        return len(captured)

    def test_list_queries_do_not_grow_with_rows(self):
        self.add_rows(0, 1)
        few = {url: self.queries(url) for url in ENDPOINTS}
        self.add_rows(1, 19)
        many = {url: self.queries(url) for url in ENDPOINTS}
        self.assertEqual(few, many)

    def test_the_service_list_names_each_default_pool(self):
        """What the console's list shows in its Pool column, without reading every pool."""
        self.add_rows(0, 3)
        listed = self.client.get("/api/v1/virtual-services/").json()["results"]
        self.assertEqual(
            [(s["name"], s["default_pool_name"]) for s in listed], [("v0", "p0"), ("v1", "p1"), ("v2", "p2")]
        )
