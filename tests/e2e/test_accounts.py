"""People, API tokens, your account, the audit log and join codes in the console
(webui/e2e/accounts.spec.ts), checked against the real API: the secret the console revealed
works as a Bearer token until the console revokes it, the join code it revealed lets an
appliance join (once), and the audit log holds what the people did."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "tests" / "artifacts" / "e2e"


def _me_with(stack, secret):
    return requests.get(f"{stack.url}/api/v1/auth/me/", headers={"Authorization": f"Bearer {secret}"}, timeout=30)


def test_accounts_people_tokens_password_and_audit(stack, playwright):
    token_file, join_file = ARTIFACTS / "acc-token.json", ARTIFACTS / "acc-join.json"
    token_file.unlink(missing_ok=True)
    join_file.unlink(missing_ok=True)
    since = datetime.now(UTC).isoformat()  # the audit log outlives the people: only this run's entries

    playwright("accounts.spec.ts", ACC_STEP="create")
    people = {u["username"]: u for u in stack.api.get("/api/v1/users/?limit=1000").json()["results"]}
    assert (people["acc-viewer"]["role"], people["acc-op"]["role"]) == ("viewer", "operator")
    assert people["acc-viewer"]["is_active"] and people["acc-op"]["is_active"]

    revealed = json.loads(token_file.read_text())
    answer = _me_with(stack, revealed["secret"])
    assert answer.status_code == 200, answer.text
    assert answer.json()["role"] == "operator"  # the token's role, below its owner's (admin)
    tokens = {t["name"]: t for t in stack.api.get("/api/v1/tokens/?limit=1000").json()["results"]}
    assert tokens[revealed["name"]]["state"] == "active"
    assert tokens[revealed["name"]]["last_used_at"] is not None

    # A new appliance joins with the code the console revealed, as its first boot does.
    code = json.loads(join_file.read_text())["code"]
    info = requests.get(f"{stack.url}/api/v1/cluster/join/{code[:4]}/", timeout=30).json()
    body = {"join_code": code, "name": "acc-lb2", "address": "192.0.2.202",
            "version": json.loads(info["info"])["version"], "time": datetime.now(UTC).isoformat()}  # fmt: skip
    joined = requests.post(f"{stack.url}/api/v1/cluster/join/", json=body, timeout=30)
    assert joined.status_code == 201, joined.text
    again = requests.post(f"{stack.url}/api/v1/cluster/join/", json={**body, "name": "acc-lb3"}, timeout=30)
    assert again.status_code == 400 and "already used" in again.text, again.text

    playwright("accounts.spec.ts", ACC_STEP="finish")
    assert "acc-lb2" not in [n["name"] for n in stack.api.get("/api/v1/nodes/?limit=1000").json()["results"]]
    answer = _me_with(stack, revealed["secret"])
    assert answer.status_code == 401, answer.text
    assert "revoked" in answer.json()["detail"]

    # acc-op's password change, as the audit log has it; the people are gone again.
    audit = stack.api.get(
        "/api/v1/audit/", params={"actor": "acc-op", "action": "password-change", "status": "ok", "since": since}
    ).json()
    assert audit["count"] == 1 and audit["results"][0]["status"] == 204, audit
    signed_in = stack.api.get(
        "/api/v1/audit/", params={"actor": "acc-op", "action": "sign-in", "status": "ok", "since": since}
    ).json()
    assert signed_in["count"] == 2, signed_in  # with the first password, then with the new one
    created = stack.api.get(
        "/api/v1/audit/", params={"object_type": "user", "action": "create", "q": "acc-", "since": since}
    ).json()
    assert {e["object_name"] for e in created["results"]} >= {"acc-viewer", "acc-op"}
    left = [u["username"] for u in stack.api.get("/api/v1/users/?limit=1000").json()["results"]]
    assert not [name for name in left if name.startswith("acc-")], left

    export = (ARTIFACTS / "acc-audit-export.csv").read_text()
    assert export.startswith("id,time,actor,")
    rows = export.strip().splitlines()[1:]
    assert rows and all(",acc-op," in row for row in rows), rows[:3]
