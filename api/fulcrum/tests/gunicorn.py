"""The API under gunicorn, as the appliance starts it, for the tests that need real HTTP (a body
over the size limit, a hundred agents long-polling at once).

Here, under tests/, and not in fulcrum/testing.py: Hypothesis draws literals from the project's
loaded modules but for test files, and a module of the suite's helpers outside them changed the
schemathesis runs' derandomized sequences (api/fulcrum/tests/test_schemathesis.py)."""

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
from django.db import connection

API_DIR = Path(__file__).resolve().parents[2]
GUNICORN_APP_NAME = "fulcrum-gunicorn-under-test"  # its database connections' application_name


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
