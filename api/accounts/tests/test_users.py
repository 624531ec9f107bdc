"""The users API (admins only): roles, passwords checked by Django's validators, versions,
and the guards that keep one active admin and stop people deleting themselves."""

from django.contrib.auth import get_user_model
from rest_framework.test import APITestCase

from accounts.choices import Role
from accounts.models import Profile
from accounts.tests.people import PASSWORD, bearer, forget_throttles, person

USERS = "/api/v1/users/"


class UsersApiTest(APITestCase):
    def setUp(self):
        forget_throttles()
        self.admin = person("root", Role.ADMIN)
        self.client.force_authenticate(self.admin)

    def url(self, user):
        return f"{USERS}{user.pk}/"

    def test_create_with_a_role_and_sign_in(self):
        body = {"username": "alice", "role": "operator", "password": PASSWORD, "version": 7}  # a version is ignored
        response = self.client.post(USERS, body, format="json")
        self.assertEqual(response.status_code, 201, response.data)
        self.assertEqual(
            (response.data["role"], response.data["is_active"], response.data["version"]), ("operator", True, 1)
        )
        self.assertNotIn("password", response.data)
        self.assertIsNone(response.data["last_login"])
        alice = get_user_model().objects.get(username="alice")
        self.assertTrue(alice.password.startswith("argon2$"))
        self.assertEqual(alice.profile.role, Role.OPERATOR)
        signin = self.client_class().post(
            "/api/v1/auth/login/", {"username": "alice", "password": PASSWORD}, format="json"
        )
        self.assertEqual((signin.status_code, signin.data["role"]), (200, "operator"))

    def test_bad_input_is_refused_per_field_and_changes_nothing(self):
        before = get_user_model().objects.count()
        cases = [
            ({"username": "bob", "password": "short"}, "password"),
            ({"username": "bob", "password": "password123"}, "password"),  # too common
            ({"username": "bob"}, "password"),
            ({"username": "bob", "password": PASSWORD, "role": "god"}, "role"),
            ({"username": "root", "password": PASSWORD}, "username"),
            ({"username": "bad name!", "password": PASSWORD}, "username"),
            ({"username": "bob", "password": PASSWORD, "is_superuser": True}, "is_superuser"),
        ]
        for body, field in cases:
            response = self.client.post(USERS, body, format="json")
            self.assertEqual(response.status_code, 400, (body, response.data))
            self.assertIn(field, response.data, body)
        self.assertEqual(get_user_model().objects.count(), before)

    def test_update_role_and_password_with_versions(self):
        bob = person("bob", Role.VIEWER)
        read = self.client.get(self.url(bob))
        self.assertEqual((read.data["version"], read["ETag"]), (1, '"1"'))
        changed = self.client.patch(self.url(bob), {"role": "operator"}, format="json", HTTP_IF_MATCH='"1"')
        self.assertEqual((changed.status_code, changed.data["role"], changed.data["version"]), (200, "operator", 2))
        stale = self.client.patch(self.url(bob), {"role": "admin"}, format="json", HTTP_IF_MATCH='"1"')
        self.assertEqual((stale.status_code, stale.data["version"]), (409, 2))
        stale_body = self.client.patch(self.url(bob), {"role": "admin", "version": 1}, format="json")
        self.assertEqual((stale_body.status_code, stale_body.data["version"]), (409, 2))
        self.assertEqual(Profile.objects.get(user=bob).role, Role.OPERATOR)
        new_password = self.client.patch(self.url(bob), {"password": "another long passphrase"}, format="json")
        self.assertEqual(new_password.status_code, 200, new_password.data)
        bob.refresh_from_db()
        self.assertTrue(bob.check_password("another long passphrase"))
        weak = self.client.patch(self.url(bob), {"password": "bob"}, format="json")
        self.assertEqual(weak.status_code, 400)
        self.assertIn("password", weak.data)

    def test_demoting_a_superuser_ends_superuser(self):
        other = person("other", Role.ADMIN)
        root2 = get_user_model().objects.create_superuser("root2", password=PASSWORD)
        self.assertEqual(self.client.get(self.url(root2)).data["role"], "admin")
        response = self.client.patch(self.url(root2), {"role": "viewer"}, format="json")
        self.assertEqual((response.status_code, response.data["role"]), (200, "viewer"))
        root2.refresh_from_db()
        self.assertFalse(root2.is_superuser)
        self.assertTrue(other.is_active)

    def test_the_last_active_admin_stays(self):
        for body, field in (({"role": "operator"}, "role"), ({"is_active": False}, "is_active")):
            response = self.client.patch(self.url(self.admin), body, format="json")
            self.assertEqual(response.status_code, 400, body)
            self.assertIn("last active admin", str(response.data[field]))
        deputy = person("deputy", Role.ADMIN)
        self.assertEqual(self.client.patch(self.url(self.admin), {"role": "operator"}, format="json").status_code, 200)
        self.client.force_authenticate(deputy)
        response = self.client.delete(self.url(self.admin))
        self.assertEqual(response.status_code, 204)
        self.assertEqual(self.client.patch(self.url(deputy), {"is_active": False}, format="json").status_code, 400)

    def test_deleting_the_last_admin_or_yourself_is_refused(self):
        response = self.client.delete(self.url(self.admin))
        self.assertEqual(response.status_code, 400)
        self.assertIn("yourself", response.data["detail"])
        # Another admin who is not active does not count.
        deputy = person("deputy", Role.ADMIN)
        self.client.force_authenticate(deputy)
        self.client.patch(self.url(deputy), {"is_active": False}, format="json")
        self.assertEqual(self.client.delete(self.url(self.admin)).status_code, 400)
        self.assertTrue(get_user_model().objects.filter(pk=self.admin.pk).exists())

    def test_deactivated_people_lose_sessions_and_tokens(self):
        bob = person("bob", Role.OPERATOR)
        script, _, _ = bearer(bob)
        self.assertEqual(script.get("/api/v1/pools/").status_code, 200)
        self.assertEqual(self.client.patch(self.url(bob), {"is_active": False}, format="json").status_code, 200)
        self.assertEqual(script.get("/api/v1/pools/").status_code, 401)

    def test_unknown_fields_and_non_admins_are_refused(self):
        response = self.client.post(USERS, {"username": "x", "password": PASSWORD, "surprise": 1}, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertIn("surprise", response.data)
        operator, _, _ = bearer(person("ops", Role.OPERATOR))
        self.assertEqual(operator.post(USERS, {"username": "x", "password": PASSWORD}, format="json").status_code, 403)
        self.assertEqual(operator.get(self.url(self.admin)).status_code, 403)
        self.assertFalse(get_user_model().objects.filter(username="x").exists())
