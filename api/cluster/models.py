"""Appliance nodes: the machines whose agents apply revisions."""

import hashlib
import secrets

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from compiler import rules
from services.validators import validate_interface, validate_name


def hash_token(token):
    return hashlib.sha256(token.encode()).hexdigest()


class Node(models.Model):
    """A load-balancer node running fulcrum-agent; it authenticates with its own token."""

    name = models.CharField(max_length=63, unique=True, validators=[validate_name])
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
    status_at = models.DateTimeField(null=True, blank=True, editable=False)

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

    Every node runs the kernel's sync daemon on ``interface``: the master sends its
    connection table, the backups receive it, so established layer-4 connections survive
    a failover. Until HA groups exist both daemons run on every node.
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

    class Meta:
        verbose_name = "IPVS connection sync"
        verbose_name_plural = "IPVS connection sync"

    def __str__(self):
        return f"ipvs sync on {self.interface}" if self.enabled else "ipvs sync off"

    @classmethod
    def load(cls):
        return cls.objects.get_or_create(pk=1)[0]
