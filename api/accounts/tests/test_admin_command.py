"""``fulcrum_admin --password-stdin``: the first-boot setup sets the console admin's password
without it ever appearing in a process list or a file."""

import io
from unittest import mock

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APITestCase

from accounts.models import AuditEntry
from accounts.tests.people import forget_throttles

GOOD = "Kestrel-Lantern-42"


def admin_with_stdin(text, *args):
    """Run ``fulcrum_admin --password-stdin`` with ``text`` as standard input; return what it printed."""
    out = io.StringIO()
    with mock.patch("sys.stdin", io.StringIO(text)):
        call_command("fulcrum_admin", "--password-stdin", *args, stdout=out)
    return out.getvalue()


class PasswordStdinTest(APITestCase):
    def setUp(self):
        forget_throttles()

    def sign_in(self, username, password):
        return self.client.post("/api/v1/auth/login/", {"username": username, "password": password}, format="json")

    def test_creates_the_superuser_who_can_sign_in(self):
        printed = admin_with_stdin(GOOD + "\n")
        self.assertNotIn(GOOD, printed)
        user = get_user_model().objects.get(username="admin")
        self.assertTrue(user.is_superuser and user.is_active)
        self.assertEqual(self.sign_in("admin", GOOD).status_code, 200)
        self.assertTrue(AuditEntry.objects.filter(object_name="admin", action="create").exists())

    def test_resets_an_existing_password(self):
        admin_with_stdin(GOOD + "\n")
        admin_with_stdin("Other-Quokka-77\r\n")
        self.assertEqual(self.sign_in("admin", GOOD).status_code, 403)
        forget_throttles()
        self.assertEqual(self.sign_in("admin", "Other-Quokka-77").status_code, 200)

    def test_only_the_first_line_is_the_password(self):
        admin_with_stdin(GOOD + "\nsecond line\n", "--username", "ops")
        self.assertTrue(get_user_model().objects.get(username="ops").check_password(GOOD))

    def test_refused_passwords_change_nothing(self):
        admin_with_stdin(GOOD + "\n")
        cases = {
            "short1\n": "too short",
            "password123\n": "too common",
            "\n": "no password",
            "": "no password",
            "tab\there-is-long\n": "control character",
        }
        for text, why in cases.items():
            with self.subTest(text=text), self.assertRaisesRegex(CommandError, why):
                admin_with_stdin(text)
        self.assertTrue(get_user_model().objects.get(username="admin").check_password(GOOD))
        with self.assertRaisesRegex(CommandError, "too short"):
            admin_with_stdin("short1\n", "--username", "newcomer")
        self.assertFalse(get_user_model().objects.filter(username="newcomer").exists())

    def test_password_file_and_stdin_exclude_each_other(self):
        with self.assertRaisesRegex(CommandError, "do not go together"):
            admin_with_stdin(GOOD + "\n", "--password-file", "/tmp/never-written")
        self.assertFalse(get_user_model().objects.exists())
