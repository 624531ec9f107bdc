"""The per-address sign-in rate holds across the API's worker processes: the real API under
gunicorn with two workers, as on the appliance, at the appliance's default rate (10 a minute).

Before the counts moved to the database each worker kept its own, so one address got up to
10 attempts a minute from each worker."""

import requests

from tests.harness.stack import Stack

RATE = 10  # FULCRUM_LOGIN_RATE=10/min, the appliance's default


def test_twenty_attempts_from_one_address_get_ten_answers_then_429():
    with Stack(prefix="throttle", env={"FULCRUM_LOGIN_RATE": f"{RATE}/min"}) as stack:
        statuses = []
        for i in range(2 * RATE):
            # A new connection each time (no session), so the kernel hands them to either worker;
            # a new username each time, so the per-username lock (5 failures) never applies.
            answer = requests.post(
                f"{stack.url}/api/v1/auth/login/", json={"username": f"nobody{i}", "password": "wrong"}, timeout=30
            )
            statuses.append(answer.status_code)
        assert statuses == [403] * RATE + [429] * RATE, statuses
