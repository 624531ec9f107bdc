"""A script's and a console's sign-in over real HTTP (Django's live server, requests):
Bearer tokens, session and CSRF cookies as a browser sees them, and a streamed export."""

import json

import requests
from django.test import LiveServerTestCase

from accounts.choices import Role
from accounts.tests.people import PASSWORD, forget_throttles, person


class OverHttpTest(LiveServerTestCase):
    def setUp(self):
        forget_throttles()
        person("root", Role.ADMIN)
        self.api = f"{self.live_server_url}/api/v1"

    def session(self):
        # Closed after the test: the server's thread for a kept-alive connection ends (and
        # closes its database connection), so nothing holds the test database when it is dropped.
        session = requests.Session()
        self.addCleanup(session.close)
        return session

    def test_a_script_signs_in_writes_and_exports_the_audit_log(self):
        made = requests.post(
            f"{self.api}/auth/token/", json={"username": "root", "password": PASSWORD, "name": "deploy"}, timeout=10
        )
        self.assertEqual(made.status_code, 201, made.text)
        script = self.session()
        script.headers["Authorization"] = f"Bearer {made.json()['token']}"
        self.assertEqual(script.post(f"{self.api}/pools/", json={"name": "web"}, timeout=10).status_code, 201)
        refused = requests.get(f"{self.api}/pools/", headers={"Authorization": "Bearer ful_wrong"}, timeout=10)
        self.assertEqual(refused.status_code, 401)
        self.assertEqual(refused.headers["WWW-Authenticate"], 'Bearer realm="api"')
        with script.get(f"{self.api}/audit/export/", params={"format": "jsonl"}, stream=True, timeout=10) as export:
            self.assertEqual(export.status_code, 200)
            self.assertIn("attachment", export.headers["Content-Disposition"])
            entries = [json.loads(line) for line in export.iter_lines() if line]
        created = next(e for e in entries if e["action"] == "create")
        self.assertEqual((created["actor"], created["token"], created["object_name"]), ("root", "deploy", "web"))
        self.assertEqual(created["address"], "127.0.0.1")
        self.assertEqual(entries[-1]["action"], "sign-in")

    def test_a_console_session_with_csrf(self):
        browser = self.session()
        signin = browser.post(f"{self.api}/auth/login/", json={"username": "root", "password": PASSWORD}, timeout=10)
        self.assertEqual(signin.status_code, 200, signin.text)
        cookie = next(c for c in signin.raw.headers.getlist("Set-Cookie") if c.startswith("sessionid="))
        self.assertIn("HttpOnly", cookie)
        self.assertIn("SameSite=Lax", cookie)
        self.assertIn("Max-Age=43200", cookie)
        self.assertEqual(browser.post(f"{self.api}/pools/", json={"name": "a"}, timeout=10).status_code, 403)
        csrf = {"X-CSRFToken": browser.cookies["csrftoken"]}
        self.assertEqual(
            browser.post(f"{self.api}/pools/", json={"name": "a"}, headers=csrf, timeout=10).status_code, 201
        )
        self.assertEqual(browser.post(f"{self.api}/auth/logout/", headers=csrf, timeout=10).status_code, 204)
        self.assertEqual(browser.get(f"{self.api}/pools/", timeout=10).status_code, 401)
