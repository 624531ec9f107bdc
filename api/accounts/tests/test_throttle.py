"""Sign-in throttles: per client address (the ``login`` rate, FULCRUM_LOGIN_RATE, 10/min) and
per username (5 failures in 15 minutes lock it, whatever address they come from; a success resets)."""

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from rest_framework.test import APITestCase

from accounts.choices import AuditAction
from accounts.models import ApiToken, AuditEntry
from accounts.tests.people import PASSWORD, forget_throttles, person


class ThrottleTest(APITestCase):
    def setUp(self):
        forget_throttles()
        person("ops")
        person("other")

    def sign_in(self, password, address, username="ops", path="/api/v1/auth/login/", **extra):
        body = {"username": username, "password": password}
        return self.client.post(path, body, format="json", REMOTE_ADDR=address, **extra)

    def test_per_address_rate(self):
        for i in range(10):
            self.assertNotEqual(
                self.sign_in(PASSWORD, "198.51.100.1", username=["ops", "other"][i % 2]).status_code, 429
            )
        refused = self.sign_in(PASSWORD, "198.51.100.1")
        self.assertEqual(refused.status_code, 429)
        self.assertGreater(int(refused["Retry-After"]), 0)
        # Another address is not affected, nor is it helped by claiming one in X-Forwarded-For
        # (no proxy is trusted by default).
        self.assertEqual(self.sign_in(PASSWORD, "198.51.100.2").status_code, 200)
        spoofed = self.sign_in(PASSWORD, "198.51.100.1", HTTP_X_FORWARDED_FOR="203.0.113.9")
        self.assertEqual(spoofed.status_code, 429)

    def test_trusted_proxy_forwards_the_client_address(self):
        with self.settings(FULCRUM_TRUSTED_PROXIES=["127.0.0.0/8"]):
            for _ in range(10):
                self.sign_in(PASSWORD, "127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9")
            self.assertEqual(self.sign_in(PASSWORD, "127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9").status_code, 429)
            self.assertEqual(self.sign_in(PASSWORD, "127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.10").status_code, 200)
        entry = AuditEntry.objects.filter(action=AuditAction.SIGN_IN).first()
        self.assertEqual(entry.address, "203.0.113.10")

    def test_failures_lock_the_username_across_addresses(self):
        for i in range(5):
            self.assertEqual(self.sign_in("wrong", f"203.0.113.{i}").status_code, 403)
        # The right password from a fresh address is refused now, and not checked.
        locked = self.sign_in(PASSWORD, "203.0.113.99")
        self.assertEqual(locked.status_code, 429)
        self.assertIn("failed sign-ins", locked.data["detail"])
        self.assertAlmostEqual(int(locked["Retry-After"]), 900, delta=5)
        token = self.sign_in(PASSWORD, "203.0.113.98", path="/api/v1/auth/token/")
        self.assertEqual(token.status_code, 429)
        self.assertEqual(ApiToken.objects.count(), 0)
        # Another username is not locked.
        self.assertEqual(self.sign_in(PASSWORD, "203.0.113.99", username="other").status_code, 200)
        # Locked attempts do not extend the lock; once the failures age out, it is open again.
        AuditEntry.objects.filter(action=AuditAction.SIGN_IN_FAILED).update(time=timezone.now() - timedelta(minutes=16))
        self.assertEqual(self.sign_in(PASSWORD, "203.0.113.99").status_code, 200)

    def test_retry_after_counts_from_the_oldest_failure_that_still_locks(self):
        for _ in range(5):
            self.sign_in("wrong", "203.0.113.1")
        entries = list(AuditEntry.objects.filter(action=AuditAction.SIGN_IN_FAILED).order_by("time"))
        for minutes, entry in zip((14, 10, 9, 8, 1), entries, strict=True):
            AuditEntry.objects.filter(pk=entry.pk).update(time=timezone.now() - timedelta(minutes=minutes))
        locked = self.sign_in(PASSWORD, "203.0.113.2")
        self.assertEqual(locked.status_code, 429)
        self.assertAlmostEqual(int(locked["Retry-After"]), 60, delta=5)

    def test_a_success_resets_the_count(self):
        for i in range(4):
            self.sign_in("wrong", f"203.0.113.{i}")
        self.assertEqual(self.sign_in(PASSWORD, "203.0.113.50").status_code, 200)
        for i in range(4):
            self.assertEqual(self.sign_in("wrong", f"203.0.113.{i + 10}").status_code, 403)
        self.assertEqual(self.sign_in(PASSWORD, "203.0.113.60").status_code, 200)

    def test_unknown_usernames_are_locked_too(self):
        for i in range(5):
            self.sign_in("x", f"203.0.113.{i}", username="ghost")
        self.assertEqual(self.sign_in("x", "203.0.113.9", username="ghost").status_code, 429)


def _login_rate(value):
    """What the settings make of FULCRUM_LOGIN_RATE=value, read by a fresh interpreter."""
    code = "from fulcrum import settings; print(settings.REST_FRAMEWORK['DEFAULT_THROTTLE_RATES']['login'])"
    env = {**os.environ, "FULCRUM_DEBUG": "1", "FULCRUM_LOGIN_RATE": value}
    api = Path(__file__).resolve().parents[2]
    return subprocess.run([sys.executable, "-c", code], cwd=api, env=env, capture_output=True, text=True, timeout=60)


def test_the_login_rate_comes_from_the_environment():
    proc = _login_rate("30/min")
    assert (proc.returncode, proc.stdout.strip()) == (0, "30/min"), proc.stderr


@pytest.mark.parametrize("value", ["", "0/min", "10", "10/fortnight", "ten/min", "10/min; x"])
def test_a_bad_login_rate_stops_the_api_from_starting(value):
    proc = _login_rate(value)
    assert proc.returncode != 0
    assert "FULCRUM_LOGIN_RATE must be like 10/min" in proc.stderr
