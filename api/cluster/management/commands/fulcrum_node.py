"""Register a node (or give an existing one a new token) and write its token to a file, or
print it alone with ``--token-file -`` (the appliance's first boot: fulcrum-manage runs as the
API's user, who may not write where the root-only agent reads its token). ``--address`` sets
the node's own address (VRRP unicast source, HAProxy peer): the appliance's management address."""

import ipaddress
import os

from django.core.management.base import BaseCommand, CommandError

from cluster.models import Node
from fulcrum.validators import validate_name


class Command(BaseCommand):
    help = "Create a node or rotate its token; write the token to --token-file (mode 600)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--token-file", required=True, help="where to write the token (mode 600); - prints it")
        parser.add_argument("--address", help="the node's own address (default: keep it; none for a new node)")

    def handle(self, name, token_file, address=None, **options):
        try:
            validate_name(name)
        except Exception as err:
            raise CommandError(f"invalid node name {name!r}: {err}") from err
        if address is not None:
            try:
                address = str(ipaddress.ip_address(address))
            except ValueError as err:
                raise CommandError(f"invalid node address {address!r}: {err}") from err
        node = Node.objects.filter(name=name).first() or Node(name=name)
        if address is not None:
            node.address = address
        token = node.rotate_token()
        node.save()
        if token_file == "-":
            self.stdout.write(token)
            return
        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(token + "\n")
        self.stdout.write(f"node {name}: token written to {token_file}")
