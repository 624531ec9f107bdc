"""Appliance nodes: the machines whose agents apply revisions."""

import hashlib
import secrets

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from compiler import rules
from fulcrum.concurrency import version_field
from fulcrum.validators import validate_interface, validate_name


def hash_token(token):
    return hashlib.sha256(token.encode()).hexdigest()


class NodeQuerySet(models.QuerySet):
    def with_applied_revision(self):
        """With the revision each node runs, without its snapshot (revisions.models.RevisionQuerySet)."""
        return self.select_related("applied_revision").defer("applied_revision__snapshot")


class Node(models.Model):
    """A load-balancer node running fulcrum-agent; it authenticates with its own token."""

    name = models.CharField(max_length=63, unique=True, validators=[validate_name])
    address = models.GenericIPAddressField(
        null=True,
        blank=True,
        unpack_ipv4=True,
        help_text="The node's own address on the HA segment: VRRP unicast source and HAProxy peer.",
    )
    standby = models.BooleanField(
        default=False, editable=False, help_text="An operator asked the node to give up every master role."
    )
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    last_seen = models.DateTimeField(null=True, blank=True, editable=False)
    applied_revision = models.ForeignKey(
        "revisions.Revision", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )
    # The agent's latest status report.
    networks = models.JSONField(default=list, editable=False, help_text="The node's interface networks (CIDR).")
    ipvs_status = models.JSONField(
        default=list, editable=False, help_text="Per IPVS service: the scheduler wanted and the one in force."
    )
    member_status = models.JSONField(
        default=list,
        editable=False,
        help_text="Per member of a dynamic-least-load pool: its load, connections and weight in force.",
    )
    vrrp_status = models.JSONField(
        default=list, editable=False, help_text="Per HA group: the node's VRRP state, priority and since when."
    )
    management = models.CharField(
        max_length=16,
        blank=True,
        default="",
        editable=False,
        help_text="The appliance's VRRP state for the cluster's management VIP (master: it holds the VIP and its "
        "database takes changes); blank: none reported.",
    )
    status_at = models.DateTimeField(null=True, blank=True, editable=False)

    version = version_field()

    objects = NodeQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = "node"
        verbose_name_plural = "nodes"

    def __str__(self):
        return self.name

    def rotate_token(self):
        """Give the node a new secret; only its hash is kept. Returns the secret once."""
        token = secrets.token_urlsafe(32)
        self.token_hash = hash_token(token)
        return token


class IpvsSync(models.Model):
    """IPVS connection synchronisation between the balancers (one row, pk 1).

    Every node runs the kernel's sync daemon on ``interface``: the master of ``ha_group``
    sends its connection table, the backups receive it, so established layer-4 connections
    survive a failover. Without a group both daemons run on every node.
    """

    enabled = models.BooleanField(default=False)
    interface = models.CharField(max_length=15, default="eth0", validators=[validate_interface])
    sync_id = models.PositiveSmallIntegerField(
        default=0, validators=[MaxValueValidator(rules.SYNC_ID_MAX)], help_text="Tells pairs on one network apart."
    )
    port = models.PositiveIntegerField(default=8848, validators=[MinValueValidator(1), MaxValueValidator(65535)])
    ttl = models.PositiveSmallIntegerField(default=1, validators=[MinValueValidator(1), MaxValueValidator(255)])
    max_packet = models.PositiveIntegerField(
        default=0,
        validators=[MaxValueValidator(rules.SYNC_MAXLEN_MAX)],
        help_text="Largest sync message in bytes; 0 = from the interface MTU.",
    )
    group = models.GenericIPAddressField(null=True, blank=True, help_text="Multicast group; empty = 224.0.0.81.")
    ha_group = models.ForeignKey(
        "HaGroup",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The HA group whose master sends and whose backups receive; empty = both daemons on every node.",
    )

    version = version_field()

    class Meta:
        verbose_name = "IPVS connection sync"
        verbose_name_plural = "IPVS connection sync"

    def __str__(self):
        return f"ipvs sync on {self.interface}" if self.enabled else "ipvs sync off"

    @classmethod
    def load(cls):
        return cls.objects.get_or_create(pk=1)[0]


class HaGroup(models.Model):
    """A VRRP instance: VIPs that move together between the nodes listed in it.

    Active/backup is one group; active/active is two or more with mirrored priorities,
    the VIPs split between them. Node-specific values (priority, interface) are per-node
    rows (HaGroupNode), never copied from one node to another.
    """

    name = models.CharField(max_length=63, unique=True, validators=[validate_name])
    vrid = models.PositiveSmallIntegerField(
        unique=True,
        validators=[MinValueValidator(rules.VRID_MIN), MaxValueValidator(rules.VRID_MAX)],
        help_text="Virtual router ID, unique on the segment.",
    )
    interface = models.CharField(max_length=15, default="eth0", validators=[validate_interface])
    vips = models.JSONField(default=list, help_text="Addresses, optionally with /prefix (default /32 or /128).")
    vrrp_version = models.PositiveSmallIntegerField(default=3, choices=[(2, "VRRPv2"), (3, "VRRPv3")])
    advert_interval_ms = models.PositiveIntegerField(
        default=1000, help_text="VRRPv3: 10 ms steps (sub-second allowed); VRRPv2: whole seconds."
    )
    preempt = models.BooleanField(default=True, help_text="A returning higher-priority node takes the VIPs back.")
    preempt_delay_s = models.PositiveIntegerField(default=0, validators=[MaxValueValidator(rules.PREEMPT_DELAY_S_MAX)])
    auth_password = models.CharField(
        max_length=8, blank=True, help_text="VRRPv2 PASS authentication (cleartext on the wire); empty = none."
    )
    track_haproxy = models.BooleanField(default=True, help_text="Give up the VIPs when HAProxy is not running.")
    track_interfaces = models.JSONField(default=list, help_text="Give up the VIPs when one of these is down.")
    witness = models.GenericIPAddressField(
        null=True, blank=True, help_text="An address (e.g. the gateway) that must answer ping before claiming the VIPs."
    )
    garp_refresh_s = models.PositiveIntegerField(
        default=60,
        validators=[MaxValueValidator(rules.GARP_REFRESH_S_MAX)],
        help_text="The master repeats gratuitous ARP / unsolicited NA this often; 0 = only on takeover.",
    )
    garp_repeat = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(rules.GARP_REPEAT_MIN), MaxValueValidator(rules.GARP_REPEAT_MAX)]
    )

    version = version_field()

    class Meta:
        ordering = ["name"]
        verbose_name = "HA group"
        verbose_name_plural = "HA groups"

    def __str__(self):
        return self.name


class HaGroupNode(models.Model):
    """One node's place in an HA group."""

    group = models.ForeignKey(HaGroup, on_delete=models.CASCADE, related_name="nodes")
    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="ha_groups")
    priority = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(rules.VRRP_PRIORITY_MIN), MaxValueValidator(rules.VRRP_PRIORITY_MAX)]
    )
    interface = models.CharField(
        max_length=15, blank=True, validators=[validate_interface], help_text="Empty = the group's interface."
    )

    class Meta:
        ordering = ["group__name", "node__name"]
        constraints = [models.UniqueConstraint(fields=["group", "node"], name="hagroupnode_unique")]

    def __str__(self):
        return f"{self.node} in {self.group} ({self.priority})"


class VrrpState(models.TextChoices):
    MASTER = "master"
    BACKUP = "backup"
    FAULT = "fault"
    STOPPED = "stopped"
    UNKNOWN = "unknown"


class HaEvent(models.Model):
    """A VRRP role change on a node, as its agent saw it."""

    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="ha_events")
    group = models.CharField(max_length=63)
    at = models.DateTimeField(help_text="When the node saw the change.")
    old_state = models.CharField(max_length=16, choices=VrrpState.choices)
    new_state = models.CharField(max_length=16, choices=VrrpState.choices)
    priority = models.PositiveSmallIntegerField(default=0)
    reason = models.CharField(max_length=500, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["-at"], name="haevent_at")]

    def __str__(self):
        return f"{self.at} {self.node} {self.group}: {self.old_state} -> {self.new_state}"


class Daemon(models.TextChoices):
    HAPROXY = "haproxy", "HAProxy"
    KEEPALIVED = "keepalived", "keepalived"


class DaemonOutcome(models.TextChoices):
    RESTARTED = "restarted"
    RESTART_FAILED = "restart-failed"


class DaemonEvent(models.Model):
    """HAProxy or keepalived found stopped between applies by a node's agent, and what it did:
    started it again from the live configuration, or could not (the reason)."""

    KEPT_PER_NODE = 500  # the newest; older ones go as new ones come

    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="daemon_events")
    daemon = models.CharField(max_length=16, choices=Daemon.choices)
    at = models.DateTimeField(help_text="When the node found it stopped.")
    outcome = models.CharField(max_length=16, choices=DaemonOutcome.choices)
    detail = models.CharField(max_length=500, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["node", "-at"], name="daemonevent_node_at")]

    def __str__(self):
        return f"{self.at} {self.node} {self.daemon}: {self.outcome}"


class JoinCodeState(models.TextChoices):
    USABLE = "usable"
    USED = "used"
    EXPIRED = "expired"


class JoinCode(models.Model):
    """A one-time code that lets a new appliance join this cluster (Nodes → Add an appliance).

    The code is ``ID-SECRET`` (see ``cluster.join``): the ID finds the row, the secret is
    kept because the discovery answer is signed with it (the joining appliance checks that
    signature before it trusts this appliance's certificate, as kubeadm's bootstrap tokens
    do). It works once and for ``cluster.join.TTL``; using it clears the secret.
    """

    code_id = models.CharField(max_length=8, unique=True, editable=False)
    secret = models.CharField(max_length=32, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(editable=False)
    used_at = models.DateTimeField(null=True, blank=True, editable=False)
    node = models.ForeignKey(
        Node,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
        help_text="The appliance that joined with the code.",
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"join code {self.code_id}"

    @property
    def state(self):
        if self.used_at is not None:
            return JoinCodeState.USED
        return JoinCodeState.USABLE if self.expires_at > timezone.now() else JoinCodeState.EXPIRED
