"""``fulcrum_node``: registers a node or rotates its token, into a file (mode 600) or, with
``--token-file -``, printed alone for the appliance's first boot to store as root."""

import io
import os
import stat
import tempfile

from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import TestCase

from cluster.models import Node, hash_token


def node_command(*args):
    out = io.StringIO()
    call_command("fulcrum_node", *args, stdout=out)
    return out.getvalue()


class NodeCommandTest(TestCase):
    def test_dash_prints_only_the_token(self):
        token = node_command("lb1", "--token-file", "-").strip()
        self.assertEqual(Node.objects.get(token_hash=hash_token(token)).name, "lb1")
        again = node_command("lb1", "--token-file", "-").strip()
        self.assertNotEqual(again, token)
        self.assertFalse(Node.objects.filter(token_hash=hash_token(token)).exists())
        self.assertEqual(Node.objects.count(), 1)

    def test_writes_the_token_to_a_private_file(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "node.token")
            self.assertIn("token written to", node_command("lb1", "--token-file", path))
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
            with open(path) as f:
                self.assertTrue(Node.objects.filter(token_hash=hash_token(f.read().strip())).exists())

    def test_refuses_a_bad_name(self):
        with self.assertRaises(CommandError):
            node_command("lb1;reboot", "--token-file", "-")
        self.assertFalse(Node.objects.exists())

    def test_sets_the_nodes_own_address(self):
        node_command("lb1", "--token-file", "-", "--address", "2001:db8::0:15")
        self.assertEqual(Node.objects.get(name="lb1").address, "2001:db8::15")
        node_command("lb1", "--token-file", "-")  # a new token keeps the address
        self.assertEqual(Node.objects.get(name="lb1").address, "2001:db8::15")
        with self.assertRaises(CommandError):
            node_command("lb2", "--token-file", "-", "--address", "10.0.0.300")
        self.assertFalse(Node.objects.filter(name="lb2").exists())
