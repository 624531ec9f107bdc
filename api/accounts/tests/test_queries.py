"""N+1 guard: the accounts lists cost the same number of queries for 1 row as for 20."""

from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APITestCase

from accounts.audit import record_event
from accounts.choices import Role
from accounts.models import ApiToken
from accounts.tests.people import person

ENDPOINTS = ["/api/v1/users/", "/api/v1/tokens/", "/api/v1/audit/"]


class QueryCountTest(APITestCase):
    def setUp(self):
        self.admin = person("root", Role.ADMIN)
        self.admin.profile  # noqa: B018 - load the role once, as a request's authentication does
        self.client.force_authenticate(self.admin)

    def add_rows(self, start, count):
        for i in range(start, start + count):
            user = person(f"u{i}", Role.OPERATOR)
            ApiToken.issue(user, f"t{i}", Role.VIEWER)
            record_event("update", actor=user, object_type="pool", object_name=f"p{i}")

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
