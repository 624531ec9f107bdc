"""Uploading, reading, renaming and deleting certificates on PostgreSQL."""

from unittest import mock

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APITestCase

from certificates.models import Certificate
from certificates.tests import pki
from fulcrum.testing import APIViewTests

# One PKI for the module: key generation is the slow part.
CHAIN = pki.Chain()
OTHER = pki.Chain("api.example.com", leaf_key=pki.ec_key())
ROOT_PEM = pki.cert_pem(CHAIN.root)
LEAF_PEM = pki.cert_pem(CHAIN.leaf)
LEAF_KEY_PEM = pki.key_pem(CHAIN.leaf_key)
P384_KEY = pki.ec_key(ec.SECP384R1)
P384_LEAF = pki.issue(P384_KEY, "p384.example.com", issuer=(CHAIN.intermediate, CHAIN.intermediate_key))
WEAK_KEY = pki.rsa_key(1024)
WEAK_LEAF = pki.issue(WEAK_KEY, "weak.example.com")
ED_KEY = pki.ed25519_key()
ED_LEAF = pki.issue(ED_KEY, "ed.example.com")
EXPIRED = pki.issue(CHAIN.leaf_key, "old.example.com", starts=-100, days=10)
NOT_YET = pki.issue(CHAIN.leaf_key, "soon.example.com", starts=10, days=90)
EXPIRING = pki.issue(CHAIN.leaf_key, "brief.example.com", starts=-1, days=11)


def key_lines(key_pem):
    """The base64 lines of a PEM key: any of them in a response would leak the key."""
    return [line for line in key_pem.splitlines() if line and not line.startswith("-----")]


class SecretAssertions:
    def assert_no_key(self, response, *key_pems):
        raw = response.content.decode()
        self.assertNotIn("PRIVATE KEY", raw)
        if response.status_code < 400:  # an error may name the field, never its value
            self.assertNotIn("private_key", raw)
        for key in [*key_pems, *Certificate.objects.exclude(private_key="").values_list("private_key", flat=True)]:
            self.assertNotIn(key.strip(), raw)
            for line in key_lines(key):
                self.assertNotIn(line, raw)


class CertificateTest(SecretAssertions, APIViewTests, APITestCase):
    url = "/api/v1/certificates/"
    model = Certificate
    update_data = {"name": "web-2026", "description": "renewed in March"}
    # CA bundles (no key): the response echoes every field of the body.
    create_data = [
        {"name": "client-ca", "certificate": ROOT_PEM},
        {
            "name": "ca.bundle",
            "description": "partner CAs",
            "certificate": pki.cert_pem(OTHER.root),
            "chain": pki.cert_pem(OTHER.intermediate, CHAIN.intermediate),
        },
    ]
    bad_data = [
        ({"name": "x", "certificate": "hello"}, "certificate"),
        ({"name": "x", "certificate": pki.cert_der(CHAIN.leaf).decode("latin-1")}, "certificate"),
        ({"name": "x", "certificate": "".join(key_lines(LEAF_PEM))}, "certificate"),  # base64 DER, no armour
        ({"name": "x", "certificate": LEAF_PEM.replace("\n", "", 3)}, "certificate"),
        ({"name": "x", "certificate": LEAF_PEM[:-80] + LEAF_PEM[-30:]}, "certificate"),  # truncated body
        ({"name": "x", "certificate": "subject=www\n" + LEAF_PEM}, "certificate"),
        ({"name": "x", "certificate": LEAF_PEM + "#!/bin/sh\nrm -rf /\n"}, "certificate"),
        ({"name": "x", "certificate": LEAF_PEM + "\0"}, "certificate"),
        ({"name": "x", "certificate": LEAF_KEY_PEM}, "certificate"),
        ({"name": "x", "certificate": LEAF_PEM + pki.cert_pem(CHAIN.intermediate)}, "certificate"),
        ({"name": "x", "certificate": LEAF_PEM + "A" * 65536}, "certificate"),
        ({"name": "x", "certificate": pki.cert_pem(EXPIRED)}, "certificate"),
        ({"name": "x", "certificate": pki.cert_pem(NOT_YET)}, "certificate"),
        ({"name": "x", "certificate": pki.cert_pem(WEAK_LEAF), "private_key": pki.key_pem(WEAK_KEY)}, "certificate"),
        ({"name": "x", "certificate": pki.cert_pem(WEAK_LEAF), "private_key": pki.key_pem(WEAK_KEY)}, "private_key"),
        ({"name": "x", "certificate": pki.cert_pem(ED_LEAF), "private_key": pki.key_pem(ED_KEY)}, "certificate"),
        ({"name": "x", "certificate": LEAF_PEM, "private_key": pki.key_pem(OTHER.leaf_key)}, "private_key"),
        ({"name": "x", "certificate": LEAF_PEM, "private_key": LEAF_KEY_PEM * 2}, "private_key"),
        ({"name": "x", "certificate": LEAF_PEM, "private_key": LEAF_KEY_PEM + LEAF_PEM}, "private_key"),
        ({"name": "x", "certificate": LEAF_PEM, "private_key": "not a key"}, "private_key"),
        (
            {"name": "x", "certificate": LEAF_PEM, "private_key": LEAF_KEY_PEM[:200] + "\n" + LEAF_KEY_PEM[-26:]},
            "private_key",
        ),
        ({"name": "x", "certificate": LEAF_PEM, "chain": "garbage"}, "chain"),
        ({"name": "x", "certificate": LEAF_PEM, "chain": pki.cert_pem(CHAIN.intermediate) + LEAF_KEY_PEM}, "chain"),
        ({"name": "x", "certificate": LEAF_PEM, "chain": pki.cert_pem(CHAIN.intermediate) + "trailing"}, "chain"),
        ({"name": "x", "certificate": LEAF_PEM, "private_key": pki.key_pem(CHAIN.leaf_key, "s3cret")}, "private_key"),
        (
            {
                "name": "x",
                "certificate": LEAF_PEM,
                "private_key": pki.key_pem(CHAIN.leaf_key, "s3cret"),
                "passphrase": "wrong",
            },
            "passphrase",
        ),
        ({"name": "x", "certificate": LEAF_PEM, "private_key": LEAF_KEY_PEM, "passphrase": "s3cret"}, "passphrase"),
        ({"name": "x", "certificate": ROOT_PEM, "passphrase": "s3cret"}, "passphrase"),
        ({"name": "x", "certificate": pki.cert_pem(OTHER.leaf)}, "certificate"),  # already stored as "web"
        ({"name": "web", "certificate": ROOT_PEM}, "name"),
        ({"name": "bad name", "certificate": ROOT_PEM}, "name"),
        ({"name": "x\nfrontend evil", "certificate": ROOT_PEM}, "name"),
        ({"name": "x"}, "certificate"),
        ({"name": "x", "certificate": ""}, "certificate"),
    ]

    def create_objects(self):
        return Certificate.objects.create(
            name="web", certificate=pki.cert_pem(OTHER.leaf), private_key=pki.key_pem(OTHER.leaf_key)
        )

    def post(self, body):
        return self.client.post(self.url, body, format="json")

    def test_upload_rsa_with_chain_and_key(self):
        response = self.post(CHAIN.upload())
        self.assertEqual(response.status_code, 201, response.data)
        data = response.data
        self.assertEqual(data["key_type"], "rsa-2048")
        self.assertIs(data["has_key"], True)
        self.assertIs(data["is_ca"], False)
        self.assertEqual(data["subject"], "CN=www.example.com")
        self.assertEqual(data["issuer"], "CN=Fulcrum Test Intermediate")
        self.assertEqual(data["sans"], ["www.example.com"])
        self.assertEqual(data["fingerprint"], CHAIN.leaf.fingerprint(pki.hashes.SHA256()).hex())
        self.assertIn(data["expires_in_days"], (88, 89))
        self.assertEqual(data["warnings"], [])
        self.assertEqual(data["chain"], pki.cert_pem(CHAIN.intermediate))
        self.assert_no_key(response, LEAF_KEY_PEM)
        stored = Certificate.objects.get(pk=data["id"])
        self.assertEqual(stored.private_key, LEAF_KEY_PEM)
        self.assertEqual(stored.not_after, CHAIN.leaf.not_valid_after_utc)

    def test_upload_ecdsa(self):
        for key, leaf, key_type in [(OTHER.leaf_key, OTHER.leaf, "ecdsa-p256"), (P384_KEY, P384_LEAF, "ecdsa-p384")]:
            body = {"name": key_type, "certificate": pki.cert_pem(leaf), "private_key": pki.key_pem(key)}
            response = self.post(body)
            self.assertEqual(response.status_code, 201, response.data)
            self.assertEqual(response.data["key_type"], key_type)
            self.assert_no_key(response, body["private_key"])

    def test_ca_bundle_has_no_key(self):
        data = self.post({"name": "ca", "certificate": ROOT_PEM}).data
        self.assertEqual((data["has_key"], data["key_type"], data["is_ca"]), (False, "", True))

    def test_traditional_key_and_ec_parameters_and_crlf_are_accepted(self):
        ec_parameters = "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n"
        bodies = [
            {**CHAIN.upload("rsa-traditional"), "private_key": pki.key_pem(CHAIN.leaf_key, traditional=True)},
            {
                "name": "ec-params",
                "certificate": pki.cert_pem(OTHER.leaf),
                "private_key": ec_parameters + pki.key_pem(OTHER.leaf_key, traditional=True),
            },
        ]
        for body in bodies:
            response = self.post(body)
            self.assertEqual(response.status_code, 201, response.data)
            Certificate.objects.filter(pk=response.data["id"]).delete()
        crlf = {key: value.replace("\n", "\r\n") for key, value in CHAIN.upload("crlf").items()}
        response = self.post(crlf)
        self.assertEqual(response.status_code, 201, response.data)
        self.assertEqual(Certificate.objects.get(name="crlf").private_key, LEAF_KEY_PEM)

    def test_encrypted_key_with_passphrase_is_stored_decrypted(self):
        for traditional in (False, True):
            encrypted = pki.key_pem(CHAIN.leaf_key, "s3cret phrase", traditional=traditional)
            body = {**CHAIN.upload("enc"), "private_key": encrypted, "passphrase": "s3cret phrase"}
            response = self.post(body)
            self.assertEqual(response.status_code, 201, response.data)
            self.assertNotIn("passphrase", response.data)
            self.assert_no_key(response, encrypted)
            stored = Certificate.objects.get(name="enc")
            self.assertEqual(stored.private_key, LEAF_KEY_PEM)
            serialization.load_pem_private_key(stored.private_key.encode(), None)  # no password needed
            self.assertNotIn("s3cret", str(Certificate.objects.filter(name="enc").values().get()))
            stored.delete()

    def test_encrypted_key_without_passphrase_says_what_to_do(self):
        body = {**CHAIN.upload(), "private_key": pki.key_pem(CHAIN.leaf_key, "s3cret")}
        response = self.post(body)
        self.assertEqual(response.status_code, 400)
        self.assertIn("give its passphrase in passphrase", response.data["private_key"][0])

    def test_error_messages(self):
        cases = [
            ({**CHAIN.upload(), "private_key": pki.key_pem(OTHER.leaf_key)}, "private_key", "Does not match"),
            ({"name": "x", "certificate": pki.cert_pem(EXPIRED)}, "certificate", "Expired on"),
            ({"name": "x", "certificate": pki.cert_pem(NOT_YET)}, "certificate", "Not valid before"),
            ({"name": "x", "certificate": "junk"}, "certificate", "Not PEM text"),
            ({"name": "x", "certificate": LEAF_PEM + "A" * 65536}, "certificate", "at most 64 KiB"),
            ({"name": "x", "certificate": pki.cert_pem(WEAK_LEAF)}, "certificate", "at least 2048"),
            ({"name": "x", "certificate": LEAF_PEM, "private_key": LEAF_KEY_PEM * 2}, "private_key", "exactly one"),
            ({"name": "x", "certificate": LEAF_KEY_PEM}, "certificate", "only certificates belong here"),
        ]
        for body, field, text in cases:
            response = self.post(body)
            self.assertEqual(response.status_code, 400, body)
            self.assertIn(text, " ".join(response.data[field]), response.data)
            self.assert_no_key(response, LEAF_KEY_PEM)

    def test_several_fields_are_reported_at_once(self):
        body = {"name": "x", "certificate": pki.cert_pem(EXPIRED), "chain": "junk", "private_key": "junk"}
        response = self.post(body)
        self.assertEqual(sorted(response.data), ["certificate", "chain", "private_key"])

    def test_warnings(self):
        expiring = {"name": "brief", "certificate": pki.cert_pem(EXPIRING), "private_key": LEAF_KEY_PEM}
        data = self.post(expiring).data
        self.assertEqual(data["expires_in_days"], 9)
        self.assertRegex(data["warnings"][0], r"^expires in 9 days, on \d{4}-\d\d-\d\d")
        unlinked = {**CHAIN.upload("unlinked"), "chain": pki.cert_pem(OTHER.intermediate)}
        data = self.post(unlinked).data
        self.assertEqual(len(data["warnings"]), 1)
        self.assertIn("does not link to the certificate's issuer", data["warnings"][0])
        out_of_order = {**OTHER.upload("order"), "chain": pki.cert_pem(OTHER.intermediate, CHAIN.root)}
        self.assertEqual(
            self.post(out_of_order).data["warnings"], ["chain certificate 1 is not issued by chain certificate 2"]
        )

    def test_stored_certificate_past_expiry_warns(self):
        cert = self.create_objects()
        Certificate.objects.filter(pk=cert.pk).update(not_after="2020-01-01T00:00Z")
        data = self.client.get(self.detail(cert)).data
        self.assertLess(data["expires_in_days"], 0)
        self.assertTrue(data["warnings"][0].startswith("expired on 2020-01-01"))

    def test_full_chain_with_root(self):
        body = {**CHAIN.upload(), "chain": pki.cert_pem(CHAIN.intermediate, CHAIN.root)}
        response = self.post(body)
        self.assertEqual(response.status_code, 201, response.data)
        self.assertEqual(response.data["warnings"], [])

    def test_content_cannot_be_changed(self):
        cert = self.create_objects()
        before = Certificate.objects.values().get(pk=cert.pk)
        for field, value in [
            ("certificate", LEAF_PEM),
            ("chain", pki.cert_pem(CHAIN.intermediate)),
            ("private_key", LEAF_KEY_PEM),
            ("certificate", "junk"),
        ]:
            response = self.client.patch(self.detail(cert), {"description": "x", field: value}, format="json")
            self.assertEqual(response.status_code, 400, response.data)
            self.assertEqual(list(response.data), [field])
            self.assertIn(f"{field} cannot be changed", response.data[field][0])
            self.assertIn("create a new certificate", response.data[field][0])
            self.assertIn("point the service at it", response.data[field][0])
        response = self.client.patch(self.detail(cert), {"passphrase": "x"}, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertEqual(Certificate.objects.values().get(pk=cert.pk), before)

    def test_content_sent_back_unchanged_is_accepted(self):
        cert = self.create_objects()
        read = self.client.get(self.detail(cert)).data
        body = {
            "name": "renamed",
            "certificate": read["certificate"].replace("\n", "\r\n"),
            "chain": read["chain"],
            "private_key": pki.key_pem(OTHER.leaf_key, traditional=True),
            "fingerprint": "ignored: read-only",
        }
        response = self.client.patch(self.detail(cert), body, format="json")
        self.assertEqual(response.status_code, 200, response.data)
        self.assertEqual(response.data["name"], "renamed")
        self.assertEqual(response.data["fingerprint"], cert.fingerprint)
        self.assert_no_key(response)

    def test_put_is_not_offered(self):
        cert = self.create_objects()
        response = self.client.put(self.detail(cert), {"name": "x", "certificate": ROOT_PEM}, format="json")
        self.assertEqual(response.status_code, 405)

    def test_key_never_appears_in_any_response(self):
        cert = self.create_objects()
        responses = [
            self.post(CHAIN.upload("uploaded")),
            self.client.get(self.url),
            self.client.get(self.detail(cert)),
            self.client.patch(self.detail(cert), {"description": "still secret"}, format="json"),
            self.client.post(
                f"{self.url}generate/", {"name": "made", "common_name": "made.example.com"}, format="json"
            ),
            self.client.get(self.url),
        ]
        for response in responses:
            self.assertIn(response.status_code, (200, 201), response.data)
            self.assert_no_key(response, LEAF_KEY_PEM, pki.key_pem(OTHER.leaf_key))
        self.assertEqual(Certificate.objects.exclude(private_key="").count(), 3)

    def test_key_is_absent_from_response_schemas(self):
        schemas = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
        for name, schema in schemas.items():
            if not name.endswith("Request"):
                self.assertNotIn("private_key", schema.get("properties", {}), name)
                self.assertNotIn("passphrase", schema.get("properties", {}), name)
        self.assertIn("has_key", schemas["Certificate"]["properties"])
        self.assertIn("private_key", schemas["CertificateRequest"]["properties"])
        self.assertEqual(
            sorted(schemas["PatchedCertificateUpdateRequest"]["properties"]), ["description", "name", "version"]
        )

    def test_in_use_is_refused_with_409(self):
        cert = self.create_objects()
        with mock.patch.object(Certificate, "users", return_value=["pool api", "virtual service web"]):
            response = self.client.delete(self.detail(cert))
        self.assertEqual(response.status_code, 409)
        self.assertEqual(response.data["detail"], "still in use by: pool api, virtual service web")
        self.assertTrue(Certificate.objects.filter(pk=cert.pk).exists())
