"""Console sign-in with session and CSRF; API tokens."""

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient, APITestCase

PASSWORD = "correct horse battery"


class AuthTest(APITestCase):
    def setUp(self):
        get_user_model().objects.create_user("ops", password=PASSWORD)

    def test_session_login_requires_csrf_for_writes(self):
        client = APIClient(enforce_csrf_checks=True)
        response = client.post("/api/v1/auth/login/", {"username": "ops", "password": PASSWORD}, format="json")
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.data["username"], "ops")
        self.assertEqual(client.get("/api/v1/pools/").status_code, 200)
        refused = client.post("/api/v1/pools/", {"name": "p"}, format="json")
        self.assertEqual(refused.status_code, 403)
        csrf = client.cookies["csrftoken"].value
        accepted = client.post("/api/v1/pools/", {"name": "p"}, format="json", HTTP_X_CSRFTOKEN=csrf)
        self.assertEqual(accepted.status_code, 201)

    def test_wrong_password_is_refused(self):
        response = self.client.post("/api/v1/auth/login/", {"username": "ops", "password": "nope"}, format="json")
        self.assertIn(response.status_code, (401, 403))
        self.assertEqual(self.client.get("/api/v1/auth/me/").status_code, 401)

    def test_logout_ends_the_session(self):
        self.client.post("/api/v1/auth/login/", {"username": "ops", "password": PASSWORD}, format="json")
        self.assertEqual(self.client.get("/api/v1/auth/me/").status_code, 200)
        self.client.post("/api/v1/auth/logout/")
        self.assertIn(self.client.get("/api/v1/auth/me/").status_code, (401, 403))

    def test_token_for_scripts(self):
        token = self.client.post("/api/v1/auth/token/", {"username": "ops", "password": PASSWORD}, format="json")
        self.assertEqual(token.status_code, 200)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.data['token']}")
        self.assertEqual(client.get("/api/v1/virtual-services/").status_code, 200)
        client.credentials(HTTP_AUTHORIZATION="Token wrong")
        self.assertEqual(client.get("/api/v1/virtual-services/").status_code, 401)
