"""pem.py's files as HAProxy loads them: `haproxy -c`, and a live TLS listener."""

import socket
import ssl
import tempfile
import unittest
from pathlib import Path

from django.test import TestCase
from django.utils import timezone

from certificates import crypto, pem
from certificates.models import Certificate
from certificates.tests import haproxy, pki

# Module-level: TestCase deep-copies test data, and keys cannot be copied.
PKI = pki.Chain()
CLIENTS = pki.Chain("client.example.com")

needs_haproxy = unittest.skipUnless(haproxy.AVAILABLE, f"{haproxy.HAPROXY} is not installed")


def stored(name, certificate, chain="", private_key=""):
    return Certificate.objects.create(name=name, certificate=certificate, chain=chain, private_key=private_key)


def generated(name, key_type, common_name="www.example.com"):
    certificate, key = crypto.generate_self_signed(common_name, [common_name], key_type, 30, timezone.now())
    return stored(name, certificate, private_key=key)


class PemTest(TestCase):
    pki = PKI

    @classmethod
    def setUpTestData(cls):
        cls.web = stored("web", pki.cert_pem(PKI.leaf), pki.cert_pem(PKI.intermediate), pki.key_pem(PKI.leaf_key))
        cls.bundle = stored("clients", pki.cert_pem(PKI.root), pki.cert_pem(PKI.intermediate))

    def test_haproxy_pem_is_leaf_chain_key_each_ending_in_newline(self):
        text = pem.haproxy_pem(self.web)
        blocks = crypto.split_pem(text, "")
        self.assertEqual([label for label, _ in blocks], ["CERTIFICATE", "CERTIFICATE", "PRIVATE KEY"])
        self.assertEqual(text, "".join(block for _, block in blocks))
        self.assertTrue(text.endswith("-----END PRIVATE KEY-----\n"))
        self.assertNotIn("\n\n", text)
        self.assertEqual(crypto.load_certificates(text.split("-----BEGIN PRIVATE KEY")[0])[0], self.pki.leaf)

    def test_haproxy_pem_without_chain(self):
        cert = generated("solo", "ecdsa-p256")
        labels = [label for label, _ in crypto.split_pem(pem.haproxy_pem(cert), "")]
        self.assertEqual(labels, ["CERTIFICATE", "PRIVATE KEY"])

    def test_ca_pem_has_no_key(self):
        self.assertEqual(pem.ca_pem(self.bundle), pki.cert_pem(self.pki.root, self.pki.intermediate))
        self.assertEqual(pem.ca_pem(self.web), pki.cert_pem(self.pki.leaf, self.pki.intermediate))

    def test_a_bundle_without_key_cannot_be_a_crt(self):
        with self.assertRaisesRegex(ValueError, "clients has no private key"):
            pem.haproxy_pem(self.bundle)

    def test_snapshot_entry(self):
        self.assertEqual(
            pem.snapshot_entry(self.web), {"name": "web", "fingerprint": self.web.fingerprint, "has_key": True}
        )
        self.assertEqual(pem.snapshot_entry(self.bundle)["has_key"], False)
        self.assertEqual(len(self.web.fingerprint), 64)

    def test_helpers_do_not_touch_the_database(self):
        web = Certificate.objects.get(pk=self.web.pk)
        with self.assertNumQueries(0):
            pem.haproxy_pem(web)
            pem.ca_pem(web)
            pem.snapshot_entry(web)


@needs_haproxy
class HAProxyCheckTest(TestCase):
    """`haproxy -c` loads what pem.py writes (it refuses a key that does not match, too)."""

    def check(self, files, bind_options):
        with tempfile.TemporaryDirectory(prefix="fulcrum-cert-") as scratch:
            return haproxy.check(scratch, files, bind_options)

    def assert_accepted(self, files, bind_options):
        ok, output = self.check(files, bind_options)
        self.assertTrue(ok, output)

    def test_crt_of_uploaded_chain(self):
        chain = pki.Chain()
        cert = stored("web", pki.cert_pem(chain.leaf), pki.cert_pem(chain.intermediate), pki.key_pem(chain.leaf_key))
        self.assert_accepted({"web.pem": pem.haproxy_pem(cert)}, 'ssl crt "${FULCRUM_RUN_DIR}/web.pem"')

    def test_crt_of_each_generated_key_type(self):
        for key_type in ["rsa-2048", "rsa-4096", "ecdsa-p256", "ecdsa-p384"]:
            cert = generated(key_type, key_type, f"{key_type}.example.com")
            self.assert_accepted({"site.pem": pem.haproxy_pem(cert)}, 'ssl crt "${FULCRUM_RUN_DIR}/site.pem"')

    def test_ca_bundle_as_ca_file(self):
        chain = pki.Chain()
        bundle = stored("clients", pki.cert_pem(chain.root), pki.cert_pem(chain.intermediate))
        site = generated("site", "ecdsa-p256")
        files = {"site.pem": pem.haproxy_pem(site), "clients.pem": pem.ca_pem(bundle)}
        options = 'ssl crt "${FULCRUM_RUN_DIR}/site.pem" ca-file "${FULCRUM_RUN_DIR}/clients.pem" verify optional'
        self.assert_accepted(files, options)

    def test_generated_certificate_as_ca_file(self):
        site = generated("site", "rsa-2048")
        files = {"site.pem": pem.haproxy_pem(site), "pinned.pem": pem.ca_pem(site)}
        options = 'ssl crt "${FULCRUM_RUN_DIR}/site.pem" ca-file "${FULCRUM_RUN_DIR}/pinned.pem" verify optional'
        self.assert_accepted(files, options)

    def test_the_check_is_not_a_rubber_stamp(self):
        chain, other = pki.Chain(), pki.Chain()
        mismatched = pki.cert_pem(chain.leaf) + pki.key_pem(other.leaf_key)
        ok, output = self.check({"bad.pem": mismatched}, 'ssl crt "${FULCRUM_RUN_DIR}/bad.pem"')
        self.assertFalse(ok)
        self.assertIn("inconsistencies between private key and certificate", output)


@needs_haproxy
class HAProxyServesTest(TestCase):
    """A real handshake: the chain HAProxy sends verifies, and a CA bundle checks clients."""

    pki, clients = PKI, CLIENTS

    @classmethod
    def setUpTestData(cls):
        cls.web = stored("web", pki.cert_pem(PKI.leaf), pki.cert_pem(PKI.intermediate), pki.key_pem(PKI.leaf_key))
        cls.client_ca = stored("client-ca", pki.cert_pem(CLIENTS.root), pki.cert_pem(CLIENTS.intermediate))

    def setUp(self):
        scratch = tempfile.TemporaryDirectory(prefix="fulcrum-cert-")
        self.addCleanup(scratch.cleanup)
        self.scratch = Path(scratch.name)
        (self.scratch / "root.pem").write_text(pki.cert_pem(self.pki.root))

    def context(self, client_pem=None):
        context = ssl.create_default_context(cafile=str(self.scratch / "root.pem"))
        if client_pem is not None:
            (self.scratch / "me.pem").write_text(client_pem)
            context.load_cert_chain(str(self.scratch / "me.pem"))
        return context

    def get(self, port, context):
        """The status line HAProxy answers with, or "" when the connection is refused."""
        try:
            with (
                socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
                context.wrap_socket(raw, server_hostname="www.example.com") as tls,
            ):
                tls.sendall(b"GET / HTTP/1.1\r\nHost: www.example.com\r\nConnection: close\r\n\r\n")
                return tls.recv(4096).decode().split("\r\n")[0]
        except (ssl.SSLError, ConnectionError):
            return ""

    def test_served_chain_verifies_to_the_root(self):
        files = {"web.pem": pem.haproxy_pem(self.web)}
        with haproxy.serving(self.scratch, files, 'ssl crt "${FULCRUM_RUN_DIR}/web.pem"') as port:
            self.assertEqual(self.get(port, self.context()), "HTTP/1.1 200 OK")

    def test_client_ca_bundle_verifies_clients(self):
        files = {"web.pem": pem.haproxy_pem(self.web), "clients.pem": pem.ca_pem(self.client_ca)}
        options = 'ssl crt "${FULCRUM_RUN_DIR}/web.pem" ca-file "${FULCRUM_RUN_DIR}/clients.pem" verify required'
        with haproxy.serving(self.scratch, files, options) as port:
            self.assertEqual(self.get(port, self.context(self.clients.client("me.example.com"))), "HTTP/1.1 200 OK")
            self.assertEqual(self.get(port, self.context()), "")  # no client certificate
            stranger = pki.Chain("stranger.example.com").client("stranger.example.com")
            self.assertEqual(self.get(port, self.context(stranger)), "")  # issued by another CA
