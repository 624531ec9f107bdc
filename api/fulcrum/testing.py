"""Generic API test bases (after NetBox's APIViewTestCases).

A model gets CRUD, authentication and validation tests by subclassing ``APIViewTestCase``
and declaring ``url``, ``model``, ``create_data`` (a list of valid bodies), ``update_data``
and ``bad_data`` (a list of ``(body, field)`` where ``field`` must carry the error).
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote, urlencode

import requests
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.test import APIClient

API_DIR = Path(__file__).resolve().parents[1]
GUNICORN_APP_NAME = "fulcrum-gunicorn-under-test"  # its database connections' application_name


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


def _database_url():
    """The test database as a DATABASE_URL for another process (dj-database-url's own form)."""
    db = connection.settings_dict
    options = {k: v for k, v in db["OPTIONS"].items() if isinstance(v, str | int)}
    host = db["HOST"]
    if host.startswith("/"):  # a socket folder goes in the query
        options["host"], host = host, ""
    auth = db["USER"] + (f":{quote(db['PASSWORD'])}" if db["PASSWORD"] else "")
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgresql://{auth}@{host}{port}/{db['NAME']}?{urlencode(options)}"


@contextlib.contextmanager
def gunicorn_on_test_database(workdir):
    """The API under gunicorn as the appliance starts it (gunicorn.conf.py), on a free loopback
    port and the test database; its URL. Its log is ``workdir``/log."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "DATABASE_URL": _database_url(), "FULCRUM_DEBUG": "1", "PGAPPNAME": GUNICORN_APP_NAME}
    argv = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "fulcrum.wsgi", "--bind", f"127.0.0.1:{port}"]
    argv += ["--graceful-timeout", "3"]  # long-polls in flight would hold a stop for their whole wait
    log = Path(workdir) / "log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=API_DIR, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(f"{url}/api/v1/auth/me/", timeout=10)
                break
            except (requests.ConnectionError, requests.Timeout):
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)  # gunicorn's quick stop: long-polls in flight end now
        proc.wait(timeout=10)
