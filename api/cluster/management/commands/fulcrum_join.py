"""Join this appliance to a cluster (its first boot: ``fulcrum-setup`` runs it with the join
code on standard input). Prints the result as one JSON object (node, agent token, version,
the cluster's certificate) for root to store: fulcrum-manage runs as the API's user, who may
not write where the root-only agent reads its token. A refusal ends with ``join refused: ...``."""

import ipaddress
import json
import sys

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from cluster import join, join_client
from cluster.models import Node
from fulcrum.validators import validate_name


class Command(BaseCommand):
    help = "Join the cluster of the appliance at TARGET with the join code read from standard input."

    def add_arguments(self, parser):
        parser.add_argument("target", help="an appliance of the cluster: address or name, optionally :port")
        parser.add_argument("--name", required=True, help="this appliance's node name (its short host name)")
        parser.add_argument("--address", required=True, help="this appliance's management address")

    def handle(self, target, name, address, **options):
        try:
            validate_name(name)
        except ValidationError as err:
            raise CommandError(f"join refused: the name {name!r}: {err.messages[0]}") from err
        try:
            ipaddress.ip_address(address)
        except ValueError as err:
            raise CommandError(f"join refused: {err}") from err
        self.refuse_a_member()
        code = sys.stdin.readline().strip()
        try:
            joined = join_client.join(target, code, name, address, settings.FULCRUM_VERSION)
        except join_client.JoinFailed as err:
            raise CommandError(f"join refused: {err}") from err
        self.stdout.write(json.dumps(joined.__dict__))

    @staticmethod
    def refuse_a_member():
        """An appliance joins one cluster, once, at its first boot: not when it joined one
        already, nor when it runs its own (its database has nodes)."""
        joined = join.membership()
        if joined:
            raise CommandError(f"join refused: this appliance already joined the cluster of {joined['member_of']}")
        try:
            nodes = list(Node.objects.values_list("name", flat=True)[:5])
        except DatabaseError:  # no schema yet: a fresh appliance
            nodes = []
        if nodes:
            raise CommandError(
                f"join refused: this appliance already runs a cluster of its own (nodes: {', '.join(nodes)}): "
                "reinstall it to join another"
            )
