"""Console sign-in: session and CSRF cookies, session rotation and expiry, sign-out,
``auth/me``, and changing one's own password."""

from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from rest_framework.test import APIClient, APITestCase

from accounts.choices import Role
from accounts.models import ApiToken
from accounts.tests.people import PASSWORD, bearer, forget_throttles, person, signed_in

NEW_PASSWORD = "a much longer passphrase 7"


class SessionTest(APITestCase):
    def setUp(self):
        forget_throttles()
        self.admin = person("root", Role.ADMIN)

    def test_session_writes_need_the_csrf_header_and_tokens_do_not(self):
        client = signed_in("root")
        self.assertEqual(client.get("/api/v1/pools/").status_code, 200)
        refused = client.post("/api/v1/pools/", {"name": "p"}, format="json")
        self.assertEqual(refused.status_code, 403)
        self.assertIn("CSRF", str(refused.data["detail"]))
        csrf = client.cookies["csrftoken"].value
        accepted = client.post("/api/v1/pools/", {"name": "p"}, format="json", HTTP_X_CSRFTOKEN=csrf)
        self.assertEqual(accepted.status_code, 201, accepted.data)
        # A Bearer token carries no cookie, so it needs (and has) no CSRF header.
        token_client, _, _ = bearer(self.admin)
        token_client.handler.enforce_csrf_checks = True
        self.assertEqual(token_client.post("/api/v1/pools/", {"name": "q"}, format="json").status_code, 201)

    def test_cookies_are_http_only_same_site_and_expire(self):
        client = APIClient()
        response = client.post("/api/v1/auth/login/", {"username": "root", "password": PASSWORD}, format="json")
        session = response.cookies[settings.SESSION_COOKIE_NAME]
        self.assertTrue(session["httponly"])
        self.assertIn(session["samesite"], ("Lax", "Strict"))
        self.assertEqual(int(session["max-age"]), 12 * 3600)
        self.assertFalse(response.cookies["csrftoken"]["httponly"])  # the console reads it
        # Each request pushes the idle expiry forward.
        self.assertTrue(settings.SESSION_SAVE_EVERY_REQUEST)
        again = client.get("/api/v1/auth/me/")
        self.assertEqual(int(again.cookies[settings.SESSION_COOKIE_NAME]["max-age"]), 12 * 3600)

    def test_secure_cookies_when_asked(self):
        with self.settings(SESSION_COOKIE_SECURE=True, CSRF_COOKIE_SECURE=True):
            response = APIClient().post(
                "/api/v1/auth/login/", {"username": "root", "password": PASSWORD}, format="json"
            )
        self.assertTrue(response.cookies[settings.SESSION_COOKIE_NAME]["secure"])
        self.assertTrue(response.cookies["csrftoken"]["secure"])

    def test_sign_in_rotates_the_session(self):
        before = SessionStore()
        before["seen"] = True
        before.create()  # a real, anonymous session the client already holds
        client = APIClient()
        client.cookies[settings.SESSION_COOKIE_NAME] = before.session_key
        client.post("/api/v1/auth/login/", {"username": "root", "password": PASSWORD}, format="json")
        after = client.cookies[settings.SESSION_COOKIE_NAME].value
        self.assertNotEqual(after, before.session_key)
        self.assertFalse(SessionStore().exists(before.session_key))
        self.assertEqual(client.get("/api/v1/auth/me/").status_code, 200)

    def test_wrong_password_is_refused(self):
        response = self.client.post("/api/v1/auth/login/", {"username": "root", "password": "nope"}, format="json")
        self.assertEqual(response.status_code, 403)
        self.assertEqual(response.data["detail"], "Wrong username or password.")
        self.assertEqual(self.client.get("/api/v1/auth/me/").status_code, 401)

    def test_a_malformed_sign_in_is_400(self):
        for body, field in (
            ([1], "non_field_errors"),
            ({"username": "root"}, "password"),
            ({"surprise": 1}, "surprise"),
        ):
            response = self.client.post("/api/v1/auth/login/", body, format="json")
            self.assertEqual(response.status_code, 400, body)
            self.assertIn(field, response.data)

    def test_a_deactivated_person_cannot_sign_in(self):
        person("gone", is_active=False)
        response = self.client.post("/api/v1/auth/login/", {"username": "gone", "password": PASSWORD}, format="json")
        self.assertEqual(response.status_code, 403)

    def test_logout_ends_the_session(self):
        client = signed_in("root", enforce_csrf_checks=False)
        self.assertEqual(client.get("/api/v1/auth/me/").status_code, 200)
        self.assertEqual(client.post("/api/v1/auth/logout/").status_code, 204)
        self.assertEqual(client.get("/api/v1/auth/me/").status_code, 401)
        self.assertEqual(APIClient().get("/api/v1/auth/me/").status_code, 401)

    def test_me_says_the_role_the_request_acts_with(self):
        person("watcher", Role.VIEWER)
        me = signed_in("watcher").get("/api/v1/auth/me/").data
        self.assertEqual((me["username"], me["role"]), ("watcher", "viewer"))
        self.assertEqual(signed_in("root").get("/api/v1/auth/me/").data["role"], "admin")
        # An operator token of an admin acts as operator.
        client, _, _ = bearer(self.admin, role=Role.OPERATOR)
        self.assertEqual(client.get("/api/v1/auth/me/").data["role"], "operator")


class PasswordChangeTest(APITestCase):
    """Changing your password ends your other sessions, keeps this one, and keeps your API
    tokens unless you ask to revoke them."""

    def setUp(self):
        forget_throttles()
        self.user = person("ops", Role.OPERATOR)
        self.here = signed_in("ops", enforce_csrf_checks=False)
        self.elsewhere = signed_in("ops", enforce_csrf_checks=False)
        self.script, self.token, _ = bearer(self.user)

    def change(self, **body):
        return self.here.post("/api/v1/auth/password/", body, format="json")

    def test_wrong_old_or_weak_new_password_changes_nothing(self):
        wrong = self.change(old_password="nope", new_password=NEW_PASSWORD)
        self.assertEqual(wrong.status_code, 400)
        self.assertIn("old_password", wrong.data)
        weak = self.change(old_password=PASSWORD, new_password="short")
        self.assertEqual(weak.status_code, 400)
        self.assertIn("new_password", weak.data)
        self.user.refresh_from_db()
        self.assertTrue(self.user.check_password(PASSWORD))

    def test_other_sessions_end_this_one_and_tokens_go_on(self):
        self.assertEqual(self.change(old_password=PASSWORD, new_password=NEW_PASSWORD).status_code, 204)
        self.assertEqual(self.here.get("/api/v1/auth/me/").status_code, 200)
        self.assertIn(self.elsewhere.get("/api/v1/auth/me/").status_code, (401, 403))
        self.assertEqual(self.script.get("/api/v1/auth/me/").status_code, 200)
        self.user.refresh_from_db()
        self.assertTrue(self.user.check_password(NEW_PASSWORD))
        self.assertTrue(self.user.password.startswith("argon2$"))

    def test_revoke_tokens_too(self):
        body = {"old_password": PASSWORD, "new_password": NEW_PASSWORD, "revoke_tokens": True}
        self.assertEqual(self.change(**body).status_code, 204)
        self.assertEqual(self.script.get("/api/v1/auth/me/").status_code, 401)
        self.assertIsNotNone(ApiToken.objects.get(pk=self.token.pk).revoked_at)

    def test_a_viewer_may_change_their_own_password(self):
        person("watcher", Role.VIEWER)
        client = signed_in("watcher", enforce_csrf_checks=False)
        response = client.post(
            "/api/v1/auth/password/", {"old_password": PASSWORD, "new_password": NEW_PASSWORD}, format="json"
        )
        self.assertEqual(response.status_code, 204, response.data)
