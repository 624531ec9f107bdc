"""Named API tokens: shown once, stored as a hash, role capped, expiry, revocation,
last use; ``POST /auth/token/`` and the ``fulcrum_token`` command make them."""

import hashlib
import io
from datetime import timedelta

from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient, APITestCase

from accounts.choices import Role
from accounts.models import ApiToken
from accounts.tests.people import PASSWORD, bearer, forget_throttles, person

TOKENS = "/api/v1/tokens/"


def using(secret):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


class TokensApiTest(APITestCase):
    def setUp(self):
        forget_throttles()
        self.ops = person("ops", Role.OPERATOR)
        self.client.force_authenticate(self.ops)

    def test_the_secret_is_shown_once_and_only_its_hash_is_stored(self):
        response = self.client.post(TOKENS, {"name": "nightly-backup"}, format="json")
        self.assertEqual(response.status_code, 201, response.data)
        secret = response.data["token"]
        self.assertRegex(secret, r"^ful_[A-Za-z0-9_-]{40}$")
        self.assertEqual((response.data["role"], response.data["owner"]), ("operator", "ops"))
        self.assertTrue(secret.startswith(response.data["prefix"]))
        self.assertEqual(len(response.data["prefix"]), 10)
        # The row holds the sha256 and the prefix, never the secret.
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM accounts_apitoken WHERE id = %s", [response.data["id"]])
            row = [str(v) for v in cursor.fetchone()]
        self.assertIn(hashlib.sha256(secret.encode()).hexdigest(), row)
        self.assertFalse(any(secret in value for value in row))
        # Reading it again never shows the secret.
        listed = self.client.get(TOKENS).data["results"][0]
        self.assertNotIn("token", listed)
        self.assertNotIn("token", self.client.get(f"{TOKENS}{response.data['id']}/").data)
        self.assertEqual(using(secret).get("/api/v1/auth/me/").data["username"], "ops")

    def test_role_is_capped_by_your_own(self):
        refused = self.client.post(TOKENS, {"name": "x", "role": "admin"}, format="json")
        self.assertEqual(refused.status_code, 400)
        self.assertIn("role", refused.data)
        viewer = self.client.post(TOKENS, {"name": "ro", "role": "viewer"}, format="json")
        self.assertEqual(viewer.data["role"], "viewer")
        # A viewer token cannot make a token above viewer.
        client = using(viewer.data["token"])
        self.assertEqual(client.post(TOKENS, {"name": "up", "role": "operator"}, format="json").status_code, 400)
        self.assertEqual(client.post(TOKENS, {"name": "same"}, format="json").data["role"], "viewer")
        self.assertEqual(ApiToken.objects.filter(name="up").count(), 0)

    def test_expiry(self):
        short = self.client.post(TOKENS, {"name": "a", "expires_in_days": 7}, format="json")
        expires = timezone.datetime.fromisoformat(short.data["expires_at"])
        self.assertAlmostEqual((expires - timezone.now()).total_seconds(), 7 * 86400, delta=60)
        for body, field in (
            ({"name": "b", "expires_in_days": 0}, "expires_in_days"),
            ({"name": "b", "expires_at": "2000-01-01T00:00:00Z"}, "expires_at"),
            ({"name": "b", "expires_in_days": 1, "expires_at": "2999-01-01T00:00:00Z"}, "expires_in_days"),
            ({"name": ""}, "name"),
            ({"name": "web\nbackend evil"}, "name"),
        ):
            response = self.client.post(TOKENS, body, format="json")
            self.assertEqual(response.status_code, 400, body)
            self.assertIn(field, response.data, body)
        token = ApiToken.objects.get(pk=short.data["id"])
        client = using(short.data["token"])
        self.assertEqual(client.get("/api/v1/pools/").status_code, 200)
        ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        expired = client.get("/api/v1/pools/")
        self.assertEqual(expired.status_code, 401)
        self.assertIn("expired", expired.data["detail"])
        self.assertTrue(expired["WWW-Authenticate"].startswith("Bearer"))
        self.assertEqual(self.client.get(f"{TOKENS}{token.pk}/").data["state"], "expired")

    def test_revoke_keeps_the_row(self):
        made = self.client.post(TOKENS, {"name": "ci"}, format="json").data
        client = using(made["token"])
        self.assertEqual(client.get("/api/v1/pools/").status_code, 200)
        self.assertEqual(self.client.delete(f"{TOKENS}{made['id']}/").status_code, 204)
        self.assertEqual(client.get("/api/v1/pools/").status_code, 401)
        row = self.client.get(f"{TOKENS}{made['id']}/").data
        self.assertEqual(row["state"], "revoked")
        self.assertIsNotNone(row["revoked_at"])
        self.assertEqual(self.client.delete(f"{TOKENS}{made['id']}/").status_code, 204)  # again: no change

    def test_people_see_their_own_admins_see_all(self):
        _, theirs, _ = bearer(person("other", Role.OPERATOR), name="theirs")
        mine = self.client.post(TOKENS, {"name": "mine"}, format="json").data
        self.assertEqual([t["name"] for t in self.client.get(TOKENS).data["results"]], ["mine"])
        self.assertEqual(self.client.get(f"{TOKENS}{theirs.pk}/").status_code, 404)
        self.assertEqual(self.client.delete(f"{TOKENS}{theirs.pk}/").status_code, 404)
        self.assertIsNone(ApiToken.objects.get(pk=theirs.pk).revoked_at)
        admin, _, _ = bearer(person("root", Role.ADMIN))
        names = {t["name"] for t in admin.get(TOKENS).data["results"]}
        self.assertTrue({"mine", "theirs"} <= names)
        self.assertEqual(admin.delete(f"{TOKENS}{mine['id']}/").status_code, 204)
        self.assertEqual(using(mine["token"]).get("/api/v1/pools/").status_code, 401)

    def test_viewers_manage_their_own_tokens(self):
        person("watcher", Role.VIEWER)
        made = self.client_class()
        made.force_authenticate(person("watcher2", Role.VIEWER))
        response = made.post(TOKENS, {"name": "dashboard"}, format="json")
        self.assertEqual((response.status_code, response.data["role"]), (201, "viewer"))
        self.assertEqual(made.delete(f"{TOKENS}{response.data['id']}/").status_code, 204)

    def test_last_use_is_recorded_with_the_address(self):
        made = self.client.post(TOKENS, {"name": "ci"}, format="json").data
        self.assertIsNone(ApiToken.objects.get(pk=made["id"]).last_used_at)
        using(made["token"]).get("/api/v1/pools/", REMOTE_ADDR="192.0.2.7")
        token = ApiToken.objects.get(pk=made["id"])
        self.assertAlmostEqual(token.last_used_at.timestamp(), timezone.now().timestamp(), delta=10)
        self.assertEqual(token.last_used_from, "192.0.2.7")
        self.assertEqual(self.client.get(f"{TOKENS}{token.pk}/").data["last_used_from"], "192.0.2.7")

    def test_malformed_and_unknown_tokens_get_401(self):
        for header in ("Bearer", "Bearer a b", "Bearer ful_nope", "Token whatever-it-was"):
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=header)
            response = client.get("/api/v1/pools/")
            self.assertEqual(response.status_code, 401, header)
            self.assertIn("Bearer", response["WWW-Authenticate"])


class SignInTokenTest(APITestCase):
    """``POST /auth/token/``: what the CLI and scripts sign in with."""

    def setUp(self):
        forget_throttles()
        self.ops = person("ops", Role.OPERATOR)

    def post(self, **body):
        return self.client.post("/api/v1/auth/token/", {"username": "ops", "password": PASSWORD, **body}, format="json")

    def test_a_named_token_for_scripts(self):
        response = self.post(name="deploy-script", expires_in_days=2)
        self.assertEqual(response.status_code, 201, response.data)
        self.assertEqual(set(response.data), {"id", "name", "token", "role", "expires_at"})
        self.assertEqual((response.data["name"], response.data["role"]), ("deploy-script", "operator"))
        token = ApiToken.objects.get(pk=response.data["id"])
        self.assertAlmostEqual((token.expires_at - timezone.now()).total_seconds(), 2 * 86400, delta=60)
        self.assertEqual(using(response.data["token"]).get("/api/v1/virtual-services/").status_code, 200)

    def test_defaults_and_role_cap(self):
        response = self.post()
        self.assertEqual(response.status_code, 201)
        self.assertTrue(response.data["name"].startswith("sign-in-"))
        self.assertEqual(response.data["role"], "operator")
        token = ApiToken.objects.get(pk=response.data["id"])
        self.assertAlmostEqual((token.expires_at - timezone.now()).total_seconds(), 30 * 86400, delta=60)
        self.assertEqual(self.post(role="viewer").data["role"], "viewer")
        above = self.post(role="admin")
        self.assertEqual(above.status_code, 400)
        self.assertIn("role", above.data)

    def test_wrong_password_makes_no_token(self):
        response = self.client.post("/api/v1/auth/token/", {"username": "ops", "password": "nope"}, format="json")
        self.assertEqual(response.status_code, 403)
        self.assertEqual(ApiToken.objects.count(), 0)


class TokenCommandTest(APITestCase):
    def test_prints_only_the_token(self):
        person("root", Role.ADMIN)
        out = io.StringIO()
        call_command(
            "fulcrum_token", "root", "--name", "stack", "--role", "operator", "--expires-in-days", "3", stdout=out
        )
        secret = out.getvalue().strip()
        self.assertRegex(secret, r"^ful_[A-Za-z0-9_-]{40}$")
        token = ApiToken.objects.get(name="stack")
        self.assertEqual(token.role, Role.OPERATOR)
        self.assertAlmostEqual((token.expires_at - timezone.now()).total_seconds(), 3 * 86400, delta=60)
        self.assertEqual(using(secret).get("/api/v1/auth/me/").data["role"], "operator")

    def test_refuses_a_role_above_the_person(self):
        person("watcher", Role.VIEWER)
        with self.assertRaises(CommandError):
            call_command("fulcrum_token", "watcher", "--name", "x", "--role", "admin", stdout=io.StringIO())
        with self.assertRaises(CommandError):
            call_command("fulcrum_token", "nobody", "--name", "x", stdout=io.StringIO())
        self.assertFalse(ApiToken.objects.exists())
