"""Appliance nodes: the machines whose agents apply revisions."""

import hashlib
import secrets

from django.db import models

from services.validators import validate_name


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
