"""The joining appliance's side of ``cluster.join``: discovery, then the join over TLS pinned
to the certificate the cluster signed. The cluster checks the rest (the code, the version, the
clock, the name and address) and says why when it refuses.

Standard library only (http.client, ssl, hmac): it runs at first boot through
``fulcrum-manage fulcrum_join``, before anything else of the appliance is set up.
"""

import http.client
import json
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime

from cluster.joincode import parse, signed_by

TIMEOUT_S = 20
DISCOVERY = "/api/v1/cluster/join/{}/"
JOIN = "/api/v1/cluster/join/"


class JoinFailed(Exception):
    """The join did not happen; the message says why, for the person at the console."""


@dataclass(frozen=True)
class Joined:
    node: str
    token: str
    version: str
    certificate: str  # the cluster's console certificate (PEM), now pinned
    replication: dict | None  # cluster.join.replication_offer: user, password, port, slot, VIP, console key


def _split(target):
    """``host``, ``host:port``, ``[v6]:port`` or a bare IPv6 address -> (host, port)."""
    target = target.strip()
    if target.startswith("["):
        host, _, rest = target[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else 443
    if target.count(":") == 1:
        host, port = target.split(":")
        return host, int(port)
    return target, 443


class _Connection(http.client.HTTPSConnection):
    """HTTPS that checks the server's certificate against one pinned certificate (exact DER),
    not against a CA or a name: the cluster's certificate is self-signed, and the appliance
    may be reached by any of its addresses."""

    def __init__(self, host, port, pinned_pem=None):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # checked below, against the pin, or by the signature
        super().__init__(host, port, timeout=TIMEOUT_S, context=context)
        self.pinned = ssl.PEM_cert_to_DER_cert(pinned_pem) if pinned_pem else None

    def connect(self):
        super().connect()
        if self.pinned is not None and self.sock.getpeercert(binary_form=True) != self.pinned:
            self.sock.close()
            raise JoinFailed(
                f"{self.host} presented another certificate than the one the cluster signed: "
                "a machine in the middle, or another appliance at that address. Nothing was sent."
            )


def _request(target, method, path, body=None, pinned=None):
    host, port = _split(target)
    connection = _Connection(host, port, pinned)
    try:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=data, headers=headers)
        answer = connection.getresponse()
        text = answer.read(1024 * 1024).decode("utf-8", errors="replace")
    except JoinFailed:
        raise
    except (OSError, http.client.HTTPException) as err:
        raise JoinFailed(f"cannot reach the cluster at {target}: {err}") from None
    finally:
        connection.close()
    try:
        return answer.status, json.loads(text) if text else {}
    except ValueError:
        raise JoinFailed(f"{target} answered {answer.status} with no JSON: is it a Fulcrum appliance?") from None


def _refusal(status, body):
    if isinstance(body, dict):
        for field, messages in body.items():
            if isinstance(messages, list) and messages:
                return f"{field}: {messages[0]}" if field not in ("join_code", "detail") else str(messages[0])
            if isinstance(messages, str):
                return messages
    return f"status {status}"


def discover(target, code):
    """The cluster's information for ``code`` (certificate, version), once its signature
    with the code's secret is checked."""
    parts = parse(code)
    if parts is None:
        raise JoinFailed("not a join code: 20 letters and digits, shown as five groups of four")
    code_id, secret = parts
    status, body = _request(target, "GET", DISCOVERY.format(code_id))
    if status == 404:
        raise JoinFailed(f"{target} has no usable join code {code_id}: wrong, used, revoked or expired")
    if status != 200 or not isinstance(body, dict):
        raise JoinFailed(f"{target} refused the discovery: {_refusal(status, body)}")
    info, signature = body.get("info"), body.get("signature")
    if not isinstance(info, str) or not signed_by(secret, info, signature):
        raise JoinFailed(
            f"the answer from {target} is not signed with this code: a wrong code, or a machine in the middle"
        )
    info = json.loads(info)
    if not info.get("certificate"):
        raise JoinFailed(f"{target} has no console certificate to pin: finish its first boot first")
    return info


def join(target, code, name, address, version):
    """Join the cluster at ``target`` (an appliance in it: address or name, optional port):
    check the signed discovery answer, then join over the pinned connection. Returns ``Joined``."""
    info = discover(target, code)
    now = datetime.now(UTC).isoformat()
    body = {"join_code": code, "name": name, "address": address, "version": version, "time": now}
    status, answer = _request(target, "POST", JOIN, body, pinned=info["certificate"])
    if status != 201:
        raise JoinFailed(f"the cluster refused the join: {_refusal(status, answer)}")
    return Joined(answer["node"], answer["token"], answer["version"], info["certificate"], answer.get("replication"))
