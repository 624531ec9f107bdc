"""Passwords are hashed with argon2; older hashes still verify and are upgraded at sign-in."""

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import Argon2PasswordHasher, make_password
from rest_framework.test import APITestCase

import fulcrum.settings
from accounts.tests.people import PASSWORD, forget_throttles, person


class Argon2Test(APITestCase):
    def setUp(self):
        forget_throttles()

    def test_the_appliance_hashes_with_djangos_argon2(self):
        # The suite runs a cheaper argon2 (settings_test); the real settings use Django's.
        self.assertEqual(fulcrum.settings.PASSWORD_HASHERS[0], "django.contrib.auth.hashers.Argon2PasswordHasher")
        self.assertIn("django.contrib.auth.hashers.PBKDF2PasswordHasher", fulcrum.settings.PASSWORD_HASHERS)
        self.assertTrue(Argon2PasswordHasher().encode(PASSWORD, Argon2PasswordHasher().salt()).startswith("argon2$"))

    def test_new_passwords_are_argon2(self):
        user = person("ops")
        self.assertTrue(user.password.startswith("argon2$argon2id$"), user.password)
        self.assertTrue(user.check_password(PASSWORD))

    def test_an_old_pbkdf2_hash_signs_in_and_is_upgraded(self):
        user = person("old")
        old_hash = make_password(PASSWORD, hasher="pbkdf2_sha256")
        get_user_model().objects.filter(pk=user.pk).update(password=old_hash)
        for path in ("/api/v1/auth/login/", "/api/v1/auth/token/"):
            response = self.client.post(path, {"username": "old", "password": PASSWORD}, format="json")
            self.assertIn(response.status_code, (200, 201), (path, response.data))
        stored = get_user_model().objects.get(pk=user.pk).password
        self.assertTrue(stored.startswith("argon2$"), stored)
        self.assertNotEqual(stored, old_hash)
        wrong = self.client.post("/api/v1/auth/login/", {"username": "old", "password": "not it"}, format="json")
        self.assertEqual(wrong.status_code, 403)
