"""The agents' long-poll under gunicorn as the appliance runs it (gunicorn.conf.py): a hundred
agents waiting at once leave threads for everyone else, hold no database connection while
they wait, and all wake on one publish (PostgreSQL's NOTIFY at its commit),
not at the end of their wait."""

import runpy
import threading
import time

import pytest
import requests
from django.contrib.auth import get_user_model
from django.db import connection

from accounts.choices import Role
from accounts.models import ApiToken
from cluster.api.views import LONG_POLL_FULL_RETRY_S, LONG_POLL_WAITERS, WAITERS
from cluster.models import Node
from fulcrum.tests.gunicorn import API_DIR, GUNICORN_APP_NAME, gunicorn_on_test_database
from revisions.tests.configuration import admin_client, agent_client

AGENTS = 100
WAIT_S = 50  # each agent's long-poll: far longer than the test takes when the publish wakes them


@pytest.fixture(scope="module")
def api(django_db_setup, django_db_blocker, tmp_path_factory):
    with gunicorn_on_test_database(tmp_path_factory.mktemp("gunicorn")) as url:
        yield url


class Agent(threading.Thread):
    """One simulated node agent: long-polls as fulcrum-agent does, and like it tries again after
    a 503 (too many waiting on one API process) when told to."""

    def __init__(self, url, token):
        super().__init__(daemon=True)
        self.url, self.token = url, token
        self.asked = threading.Event()
        self.answer, self.refused = None, 0

    def run(self):
        with requests.Session() as session:
            session.headers["Authorization"] = f"Node {self.token}"
            while True:
                self.asked.set()
                got = session.get(f"{self.url}/api/v1/agent/desired/", params={"known": 0, "wait": WAIT_S}, timeout=90)
                if got.status_code != 503:
                    self.answer = (got.status_code, got.json() if got.status_code == 200 else None, time.monotonic())
                    return
                self.refused += 1
                time.sleep(int(got.headers["Retry-After"]))


def api_connections():
    """The connections of the API under test (gunicorn's processes) to the test database."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [GUNICORN_APP_NAME])
        return cursor.fetchone()[0]


def test_a_hundred_waiting_agents_leave_the_api_free_and_wake_on_a_publish(api, transactional_db):
    tokens = []
    for i in range(AGENTS):
        node = Node(name=f"lb{i:03}", address=f"10.9.{i // 200}.{i % 200 + 1}")
        tokens.append(node.rotate_token())
        node.save()
    operator = {
        "Authorization": f"Bearer {ApiToken.issue(get_user_model().objects.create_superuser('op'), 'op', Role.ADMIN)[1]}"
    }
    agents = [Agent(api, token) for token in tokens]
    for agent in agents:
        agent.start()
    for agent in agents:
        assert agent.asked.wait(30)
    time.sleep(3)  # every poll in, found nothing, waiting
    assert all(agent.answer is None for agent in agents), [a.answer for a in agents if a.answer]

    # The operator still gets answers (with 16 threads per process, 100 waiting polls held them all).
    for _ in range(5):
        pools = requests.get(f"{api}/api/v1/pools/", headers=operator, timeout=10)
        assert pools.status_code == 200, pools.text
    # Waiting polls hold no database connection (the listeners and the operator's reads do).
    assert 0 < api_connections() < AGENTS // 4, api_connections()

    published = time.monotonic()
    answer = admin_client("publisher").post("/api/v1/revisions/", {"message": "wake them"}, format="json")
    assert answer.status_code == 201, answer.data
    for agent in agents:
        agent.join(WAIT_S)
    answers = [agent.answer for agent in agents]
    assert all(a is not None and a[:1] == (200,) for a in answers), answers
    assert {a[1]["revision"] for a in answers} == {answer.data["number"]}
    assert {a[1]["node"] for a in answers} == {f"lb{i:03}" for i in range(AGENTS)}
    woke = max(a[2] for a in answers) - published
    # Woken by the publish, not by the end of the wait (the slowest of them still well inside it).
    assert woke < WAIT_S / 2, woke
    refused = sum(agent.refused for agent in agents)
    print(f"{AGENTS} agents: all answered {woke:.2f} s after the publish; told to try again {refused} times")


def test_past_its_share_of_waiting_polls_a_process_says_when_to_try_again(db):
    node = Node(name="lb1", address="10.9.0.1")
    agent = agent_client(node.rotate_token())
    node.save()
    taken = 0
    try:
        while WAITERS.acquire(blocking=False):  # this process's share, all waiting
            taken += 1
        full = agent.get("/api/v1/agent/desired/?known=0&wait=30")
        assert (full.status_code, full.headers["Retry-After"]) == (503, str(LONG_POLL_FULL_RETRY_S)), full
        assert full.json()["detail"] == f"{LONG_POLL_WAITERS} agents already wait on this API process; try again."
        assert agent.get("/api/v1/agent/desired/?known=0&wait=0").status_code == 204  # one that does not wait
    finally:
        for _ in range(taken):
            WAITERS.release()
    assert taken == LONG_POLL_WAITERS


def test_the_api_processes_keep_threads_beside_the_waiting_polls():
    served = runpy.run_path(str(API_DIR / "gunicorn.conf.py"))
    assert served["worker_class"] == "gthread"
    assert served["threads"] - LONG_POLL_WAITERS >= 16  # for operators, the console and agents' reports
