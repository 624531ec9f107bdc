"""N+1 guard: the list costs the same number of queries for 1 certificate as for 20."""

from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APITestCase

from certificates import crypto
from certificates.models import Certificate

URL = "/api/v1/certificates/"


class QueryCountTest(APITestCase):
    def setUp(self):
        self.client.force_authenticate(get_user_model().objects.create_superuser("q", password="correct horse battery"))

    def add_rows(self, start, count):
        for i in range(start, start + count):
            certificate, key = crypto.generate_self_signed(
                f"h{i}.example.com", [f"h{i}.example.com"], "ecdsa-p256", 30, timezone.now()
            )
            Certificate.objects.create(name=f"c{i}", certificate=certificate, private_key=key)

    def queries(self):
        with CaptureQueriesContext(connection) as captured:
            self.assertEqual(self.client.get(URL).status_code, 200)
        return captured

    def test_list_queries_do_not_grow_with_rows(self):
        self.add_rows(0, 1)
        few = len(self.queries())
        self.add_rows(1, 19)
        many = self.queries()
        self.assertEqual(few, len(many))
        # The key column is never read to answer a list.
        self.assertFalse(any("private_key" in q["sql"] for q in many.captured_queries))
