"""Joining a new appliance to the cluster with a one-time join code.

The scheme is kubeadm's bootstrap token, for a code typed at a serial console:

- An admin makes a code on the primary (Nodes → Add an appliance, ``fulcrum join-code
  create``, ``POST /api/v1/join-codes/``): ``ID-SECRET``, 20 characters of Crockford's
  base32 shown as five groups of four (``cluster.joincode``), 80 bits of secret. It works
  once and for ``TTL``.
- **Discovery.** The new appliance asks ``GET /api/v1/cluster/join/<ID>/`` and gets the
  cluster's information (this appliance's console certificate and package version) with an
  HMAC-SHA256 signature keyed by the secret. It checks the signature before
  it believes any of it, then talks to the primary over TLS pinned to that certificate: a
  machine in the middle that does not know the secret can neither sign nor read what
  follows, and the secret itself never travelled yet.
- **Join.** Over the pinned connection it sends the whole code with its name, management
  address, package version and clock (``POST /api/v1/cluster/join/``). Each refusal names
  its reason and changes nothing; the code stays usable until it works or expires. On
  success the code is spent and the appliance gets its node and agent token, and what its
  database needs to become a standby of this one's (``replication_offer``): the
  replication role's password and the slot named for it; with them the cluster's management
  VIP and the console certificate's key, for the appliance may one day hold that VIP and
  must then serve the console the agents pinned. (The key adds no trust the database's
  copy does not already carry: it holds every certificate's key.)

The joining side is ``cluster.join_client``.
"""

import hmac
import json
import re
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from cluster import replication
from cluster.joincode import ID_LENGTH, SECRET_LENGTH, display, parse, random_part, sign
from cluster.models import JoinCode, Node

TTL = timedelta(minutes=30)
REPLICATION_USER = "fulcrum_replication"  # made by fulcrum-api-init on the primary
DATABASE_PORT = 5432


class JoinRefused(Exception):
    """The join is refused; ``field`` names the part of the request at fault."""

    def __init__(self, field, message, status=400):
        super().__init__(message)
        self.field = field
        self.message = message
        self.status = status


def issue(user):
    """A new code; returns ``(row, code as shown)``. The code is shown this once."""
    for _ in range(20):
        code_id = random_part(ID_LENGTH)
        # IDs are never reused: an old one still names its code in the list and the audit log.
        if not JoinCode.objects.filter(code_id=code_id).exists():
            break
    else:  # pragma: no cover - 20 collisions in a space of a million
        raise RuntimeError("no free join code ID")
    secret = random_part(SECRET_LENGTH)
    row = JoinCode.objects.create(code_id=code_id, secret=secret, created_by=user, expires_at=timezone.now() + TTL)
    return row, display(code_id + secret)


def usable(code_id, now=None):
    """The unspent, unexpired code with this ID, or None."""
    now = now or timezone.now()
    return JoinCode.objects.filter(code_id=code_id, used_at__isnull=True, expires_at__gt=now).first()


def console_certificate():
    """This appliance's console certificate (PEM text), which the joining appliance pins."""
    try:
        with open(settings.FULCRUM_CONSOLE_CERT, encoding="ascii") as f:
            return f.read()
    except OSError:
        return ""


def discovery(code_id):
    """The signed cluster information for a code ID: ``{"info": JSON text, "signature": hex}``.

    The signature covers the exact text, so the joining appliance checks it before parsing."""
    row = usable(code_id)
    if row is None:
        return None
    info = json.dumps({"certificate": console_certificate(), "version": settings.FULCRUM_VERSION}, sort_keys=True)
    return {"info": info, "signature": sign(row.secret, info)}


def _check_version(version):
    if version != settings.FULCRUM_VERSION:
        raise JoinRefused(
            "version",
            f"This appliance runs Fulcrum {version}, the cluster runs {settings.FULCRUM_VERSION}: "
            "install the same version on both, then join again.",
        )


def _check_clock(their_time, now):
    skew = (their_time - now).total_seconds()
    limit = settings.FULCRUM_JOIN_MAX_SKEW_S
    if abs(skew) > limit:
        way = "ahead of" if skew > 0 else "behind"
        raise JoinRefused(
            "time",
            f"This appliance's clock is {abs(skew):.0f} s {way} the cluster's (at most {limit} s allowed): "
            "set the clock or NTP on it, then join again.",
        )


def _check_not_member(name, address):
    if Node.objects.filter(name=name).exists():
        raise JoinRefused(
            "name", f"An appliance named {name} is already in this cluster: a node has one name.", status=409
        )
    if Node.objects.filter(address=address).exists():
        taken = Node.objects.get(address=address).name
        raise JoinRefused(
            "address", f"{address} is already the address of {taken} in this cluster: each appliance has its own.",
            status=409,
        )  # fmt: skip


def redeem(code, name, address, version, their_time):
    """Join: check everything, then spend the code and register the node, in one transaction.

    Returns ``(node, agent token)``; raises ``JoinRefused`` (nothing changed)."""
    parts = parse(code)
    now = timezone.now()
    wrong = JoinRefused(
        "join_code", "Wrong join code: check it, or make a new one on the cluster (Nodes → Add an appliance)."
    )
    if parts is None:
        raise wrong
    with transaction.atomic():
        row = JoinCode.objects.select_for_update().filter(code_id=parts[0]).first()
        if row is not None and row.used_at is not None:  # its secret is gone: the ID says enough
            raise JoinRefused(
                "join_code", "This join code was already used: make a new one (Nodes → Add an appliance)."
            )
        if row is None or not hmac.compare_digest(row.secret, parts[1]):
            raise wrong
        if row.expires_at <= now:
            raise JoinRefused(
                "join_code", f"This join code expired at {row.expires_at:%Y-%m-%d %H:%M} UTC: make a new one."
            )
        _check_version(version)
        _check_clock(their_time, now)
        _check_not_member(name, address)
        node = Node(name=name, address=address)
        token = node.rotate_token()
        try:
            with transaction.atomic():
                node.save()
        except IntegrityError as err:  # joined by someone else between the check and now
            raise JoinRefused("name", f"An appliance named {name} is already in this cluster.", status=409) from err
        row.used_at, row.node, row.secret = now, node, ""
        row.save(update_fields=["used_at", "node", "secret"])
    return node, token


_TARGET = re.compile(r"[A-Za-z0-9.:\[\]-]{1,300}")


def membership():
    """The cluster this appliance joined, from ``FULCRUM_CLUSTER_ENV`` (written by the first-boot
    setup when it joined): ``{"member_of": "https://<appliance of the cluster>", "node": name}``,
    or None on an appliance that started its own cluster."""
    try:
        with open(settings.FULCRUM_CLUSTER_ENV, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    values = dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
    target, node = values.get("FULCRUM_CLUSTER_JOINED", ""), values.get("FULCRUM_CLUSTER_NODE", "")
    if not _TARGET.fullmatch(target):
        return None
    return {"member_of": f"https://{target}/", "node": node if re.fullmatch(r"[A-Za-z0-9_.-]{1,63}", node) else ""}


def replication_offer(node):
    """What the joining ``node`` needs to make its database a standby of this one's: the
    replication role, its password, the port and the node's slot. None where the database does
    not replicate (no secret: a development or test setup, with PostgreSQL of its own)."""
    try:
        with open(settings.FULCRUM_REPLICATION_SECRET, encoding="ascii") as f:
            secret = f.read().strip()
    except OSError:
        return None
    if not secret:
        return None
    try:
        with open(settings.FULCRUM_CONSOLE_KEY, encoding="ascii") as f:
            key = f.read()
    except OSError:
        key = None
    return {
        "user": REPLICATION_USER,
        "password": secret,
        "port": DATABASE_PORT,
        "slot": replication.slot_name(node.pk, node.name),
        "management_vip": settings.FULCRUM_MGMT_VIP or None,
        "console_key": key if key and "PRIVATE KEY-----" in key else None,
    }
