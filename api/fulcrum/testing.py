"""Generic API test bases (after NetBox's APIViewTestCases).

A model gets CRUD, authentication and validation tests by subclassing ``APIViewTestCase``
and declaring ``url``, ``model``, ``create_data`` (a list of valid bodies), ``update_data``
and ``bad_data`` (a list of ``(body, field)`` where ``field`` must carry the error).
"""

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient


class APIViewTests:
    url = ""
    model = None
    create_data = []
    update_data = {}
    bad_data = []

    def setUp(self):
        self.user = get_user_model().objects.create_superuser("tester", password="correct horse battery")
        self.client.force_authenticate(self.user)

    def create_objects(self):
        """Rows that exist before each test; return one to update and delete."""
        raise NotImplementedError

    def detail(self, obj):
        return f"{self.url}{obj.pk}/"

    def test_list(self):
        self.create_objects()
        response = self.client.get(self.url)
        self.assertEqual(response.status_code, 200, response.data)
        self.assertEqual(response.data["count"], self.model.objects.count())

    def test_create_each(self):
        self.create_objects()
        for body in self.create_data:
            before = self.model.objects.count()
            response = self.client.post(self.url, body, format="json")
            self.assertEqual(response.status_code, 201, response.data)
            self.assertEqual(self.model.objects.count(), before + 1)
            self.assertTrue(self.model.objects.filter(pk=response.data["id"]).exists())
            for field, value in body.items():
                self.assertEqual(response.data[field], value, field)

    def test_update(self):
        obj = self.create_objects()
        response = self.client.patch(self.detail(obj), self.update_data, format="json")
        self.assertEqual(response.status_code, 200, response.data)
        for field, value in self.update_data.items():
            self.assertEqual(response.data[field], value)

    def test_delete(self):
        obj = self.create_objects()
        self.assertEqual(self.client.delete(self.detail(obj)).status_code, 204)
        self.assertFalse(self.model.objects.filter(pk=obj.pk).exists())

    def test_bad_data_is_refused_and_changes_nothing(self):
        self.create_objects()
        for body, field in self.bad_data:
            before = list(self.model.objects.order_by("pk").values())
            response = self.client.post(self.url, body, format="json")
            self.assertEqual(response.status_code, 400, (body, response.data))
            self.assertIn(field, response.data, (body, response.data))
            self.assertEqual(list(self.model.objects.order_by("pk").values()), before)

    def test_unknown_field_is_refused(self):
        self.create_objects()
        response = self.client.post(self.url, {**self.create_data[0], "surprise": 1}, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertIn("surprise", response.data)

    def test_anonymous_is_refused(self):
        obj = self.create_objects()
        anonymous = APIClient()
        self.assertIn(anonymous.get(self.url).status_code, (401, 403))
        self.assertIn(anonymous.post(self.url, self.create_data[0], format="json").status_code, (401, 403))
        self.assertIn(anonymous.delete(self.detail(obj)).status_code, (401, 403))
        self.assertTrue(self.model.objects.filter(pk=obj.pk).exists())
