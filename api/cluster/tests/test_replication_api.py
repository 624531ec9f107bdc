"""GET /api/v1/cluster/replication/: how this appliance's database replicates, for every
signed-in role (tests/pair/test_replication.py reads the same status off a real pair)."""

from rest_framework.test import APIClient, APITestCase

from accounts.choices import Role
from accounts.tests.people import person

URL = "/api/v1/cluster/replication/"


class ReplicationViewTests(APITestCase):
    def test_a_single_database_is_a_primary_without_standbys(self):
        self.client.force_authenticate(person("watcher", Role.VIEWER))
        answer = self.client.get(URL)
        self.assertEqual(answer.status_code, 200, answer.data)
        self.assertEqual(
            answer.json(),
            {"role": "primary", "state": "single", "synchronous_standby_names": "", "standbys": [], "slots": [],
             "primary": None, "lag_bytes": None, "fenced": False},
        )  # fmt: skip

    def test_it_is_read_only_and_needs_a_sign_in(self):
        self.assertIn(APIClient().get(URL).status_code, (401, 403))
        self.client.force_authenticate(person("root", Role.ADMIN))
        self.assertEqual(self.client.post(URL, {}, format="json").status_code, 405)
